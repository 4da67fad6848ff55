/*
 * users.c — who is asking, and as whom a job runs (docs/security.md).
 *
 * slaqd started as root is a multi-user service, as Slurm's slurmd is:
 * the kernel tells it who each peer on the Unix socket is (SO_PEERCRED,
 * read in conn.c), and every job it starts runs as the user who submitted
 * it: their uid, primary group and supplementary groups (initgroups'
 * list), HOME, USER, LOGNAME and SHELL from their passwd entry. Its cgroup
 * and quota stay slaqd's (enforce.c): the job cannot raise its own share.
 *
 * Who may do what is decided here, once, for the socket and the HTTP API:
 * every user who reaches the socket may list every job and read status;
 * a job's owner may cancel, suspend, resume and read the logs of it; root,
 * slaqd's own user, --allow-uid users and members of --admin-group
 * ("administrators") may act on every job and change the policy. slaqd
 * started as an ordinary user can run only that user's jobs: others may
 * still look, and attach jobs of their own, but a submit is refused.
 *
 * Over TCP there is no kernel to ask, so a user shows a credential slaqd
 * issued them over the Unix socket: "UID:HEX", HEX a keyed BLAKE2b hash of
 * the uid under a random key that never leaves STATE/user-token.key. It
 * names one user and proves nothing about any other; deleting the key
 * revokes every credential at once (the next `slaq token` makes a new one).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <sodium.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/api.h"
#include "daemon/daemon.h"
#include "daemon/jobs.h"
#include "daemon/loop.h"
#include "daemon/users.h"

int user_can_switch(void)
{
    return geteuid() == 0;
}

/* The supplementary groups of passwd user `name` with primary group gid,
 * as initgroups would set them: a malloc'ed array (*n entries), or NULL. */
static gid_t *group_list(const char *name, gid_t gid, int *n)
{
    int cap = 32;
    for (int tries = 0; tries < 8; tries++) {
        gid_t *g = malloc((size_t)cap * sizeof *g);
        if (!g)
            return NULL;
        int got = cap;
        if (getgrouplist(name, gid, g, &got) >= 0) {
            *n = got;
            return g;
        }
        free(g);
        cap = got > cap ? got : cap * 2;
    }
    return NULL;
}

/* 1 if uid (passwd name, primary group gid) administers slaqd. */
static int is_admin(const sd_daemon *d, uid_t uid, const char *name,
                    gid_t gid)
{
    if (uid == 0 || uid == geteuid())
        return 1;
    for (size_t i = 0; i < d->cfg.n_allow_uids; i++)
        if (d->cfg.allow_uids[i] == uid)
            return 1;
    if (!d->cfg.admin_group)
        return 0;
    if (gid == d->cfg.admin_gid)
        return 1;
    if (!name)
        return 0;
    int n = 0, in = 0;
    gid_t *g = group_list(name, gid, &n);
    for (int i = 0; g && i < n; i++)
        in |= g[i] == d->cfg.admin_gid;
    free(g);
    return in;
}

void user_from_uid(const sd_daemon *d, uid_t uid, gid_t gid, sd_user *out)
{
    memset(out, 0, sizeof *out);
    out->uid = uid;
    out->gid = gid;
    struct passwd pw, *res = NULL;
    char buf[4096];
    if (getpwuid_r(uid, &pw, buf, sizeof buf, &res) == 0 && res) {
        snprintf(out->name, sizeof out->name, "%s", pw.pw_name);
        out->gid = pw.pw_gid;
    } else {
        snprintf(out->name, sizeof out->name, "%u", (unsigned)uid);
    }
    out->admin = is_admin(d, uid, res ? out->name : NULL, out->gid);
}

void user_self(const sd_daemon *d, sd_user *out)
{
    user_from_uid(d, geteuid(), getegid(), out);
}

/* "alice (uid 1001)" */
static const char *user_label(const sd_user *u, char *buf, size_t len)
{
    snprintf(buf, len, "%s (uid %u)", u->name, (unsigned)u->uid);
    return buf;
}

json_t *user_may_submit(const sd_daemon *d, const sd_user *who)
{
    char a[96], b[96];
    if (who->reader)
        return api_error("permission_denied", "permission denied: the HTTP "
                         "API only reads; submit with the slaq command");
    if (who->uid == geteuid() || user_can_switch())
        return NULL;
    sd_user self;
    user_self(d, &self);
    return api_error("permission_denied", "permission denied: slaqd runs as "
                     "%s, not root, so it runs only that user's jobs; a job "
                     "of %s would run as %s. Ask for a slaqd run as root "
                     "(the system service), or start your own slaqd",
                     user_label(&self, a, sizeof a),
                     user_label(who, b, sizeof b), self.name);
}

json_t *user_may_act_on(const sd_user *who, uid_t owner,
                        const char *owner_name, const char *what,
                        const char *verb)
{
    char a[96];
    if (who->reader)
        return api_error("permission_denied", "permission denied: the HTTP "
                         "API only reads; %s %s with the slaq command", verb,
                         what);
    if (who->admin || who->uid == owner)
        return NULL;
    return api_error("permission_denied", "permission denied: %s belongs "
                     "to %s (uid %u); %s may not %s it (only its owner and "
                     "slaqd's administrators: root, --allow-uid users and "
                     "the --admin-group)", what, owner_name ? owner_name
                     : "?", (unsigned)owner, user_label(who, a, sizeof a),
                     verb);
}

json_t *user_may_act(const sd_user *who, const sd_job *j, const char *verb)
{
    char what[32];
    snprintf(what, sizeof what, "job %lld", (long long)j->id);
    return user_may_act_on(who, j->uid, j->user, what, verb);
}

json_t *user_may_admin(const sd_user *who, const char *what)
{
    char a[96];
    if (who->reader)
        return api_error("permission_denied", "permission denied: the HTTP "
                         "API only reads; %s with the slaq command", what);
    if (who->admin)
        return NULL;
    return api_error("permission_denied", "permission denied: only slaqd's "
                     "administrators (root, --allow-uid users and the "
                     "--admin-group) may %s; %s is not one", what,
                     user_label(who, a, sizeof a));
}

int user_group_parse(const char *where, const char *name, gid_t *out)
{
    struct group gr, *res = NULL;
    char buf[16384];
    char *end;
    long n = strtol(name, &end, 10);
    if (*name && !*end && n >= 0 && n <= 0x7fffffffL) {
        *out = (gid_t)n;
        return 0;
    }
    int rc = getgrnam_r(name, &gr, buf, sizeof buf, &res);
    if (rc || !res) {
        fprintf(stderr, "slaqd: %s: no group '%s'%s%s (expected a group name "
                "from /etc/group or a number)\n", where, name,
                rc ? ": " : "", rc ? strerror(rc) : "");
        return -1;
    }
    *out = gr.gr_gid;
    return 0;
}

int user_runas_prepare(const sd_daemon *d, uid_t uid, const char *user,
                       sd_runas *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    if (uid == geteuid())
        return 0; /* slaqd's own job: as before, slaqd's credentials */
    if (!user_can_switch()) {
        sd_user self;
        user_self(d, &self);
        snprintf(err, errlen, "permission denied: slaqd runs as %s (uid %u), "
                 "not root, so it cannot start a job as %s (uid %u)",
                 self.name, (unsigned)self.uid, user ? user : "?",
                 (unsigned)uid);
        return -1;
    }
    struct passwd pw, *res = NULL;
    char buf[16384];
    if (getpwuid_r(uid, &pw, buf, sizeof buf, &res) || !res) {
        snprintf(err, errlen, "user %s (uid %u) has no passwd entry on this "
                 "machine: slaqd cannot start a job as it", user ? user : "?",
                 (unsigned)uid);
        return -1;
    }
    r->switch_user = 1;
    r->uid = pw.pw_uid;
    r->gid = pw.pw_gid;
    r->groups = group_list(pw.pw_name, pw.pw_gid, &r->ngroups);
    r->home = strdup(pw.pw_dir ? pw.pw_dir : "/");
    r->shell = strdup(pw.pw_shell && *pw.pw_shell ? pw.pw_shell : "/bin/sh");
    r->name = strdup(pw.pw_name);
    if (!r->groups || !r->home || !r->shell || !r->name) {
        user_runas_free(r);
        snprintf(err, errlen, "out of memory (or no groups) for user %s",
                 pw.pw_name);
        return -1;
    }
    return 0;
}

int user_runas_become(const sd_runas *r)
{
    if (!r->switch_user)
        return 0;
    if (setgroups((size_t)r->ngroups, r->groups) < 0 || setgid(r->gid) < 0 ||
        setuid(r->uid) < 0)
        return -1;
    /* Gone for good: a job must never get root back. */
    if (r->uid != 0 && setuid(0) == 0) {
        errno = EPERM;
        return -1;
    }
    return 0;
}

void user_runas_free(sd_runas *r)
{
    free(r->groups);
    free(r->home);
    free(r->shell);
    free(r->name);
    memset(r, 0, sizeof *r);
}

#define USER_KEY_LEN 32

/* Reads STATE/user-token.key into key; with create, makes it (0600,
 * random) when it does not exist. 0, or -1 with err set. */
static int user_key(const sd_daemon *d, int create,
                    unsigned char key[USER_KEY_LEN], char *err, size_t errlen)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/user-token.key", d->cfg.state_dir);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && create) {
        if (sodium_init() < 0) {
            snprintf(err, errlen, "libsodium failed to initialise");
            return -1;
        }
        randombytes_buf(key, USER_KEY_LEN);
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                  0600);
        if (fd >= 0) {
            ssize_t n = write(fd, key, USER_KEY_LEN);
            int bad = n != USER_KEY_LEN || fsync(fd) < 0;
            close(fd);
            if (!bad)
                return 0;
            unlink(path);
            snprintf(err, errlen, "cannot write %s: %s", path,
                     n < 0 ? strerror(errno) : "short write");
            return -1;
        }
        if (errno != EEXIST) {
            snprintf(err, errlen, "cannot create %s: %s", path,
                     strerror(errno));
            return -1;
        }
        fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0) {
        snprintf(err, errlen, errno == ENOENT ? "no user credentials were "
                 "issued yet (%s does not exist)" : "cannot open %s: %s",
                 path, strerror(errno));
        return -1;
    }
    ssize_t n = read(fd, key, USER_KEY_LEN);
    close(fd);
    if (n != USER_KEY_LEN) {
        snprintf(err, errlen, "%s must hold %d bytes; delete it to make a "
                 "new key (every user credential changes)", path,
                 USER_KEY_LEN);
        return -1;
    }
    return 0;
}

/* The hex part of uid's credential under key (2 * 32 digits + NUL). */
static void user_mac(const unsigned char key[USER_KEY_LEN], uid_t uid,
                     char hex[2 * USER_KEY_LEN + 1])
{
    char msg[64];
    unsigned char mac[USER_KEY_LEN];
    int n = snprintf(msg, sizeof msg, "slaq user credential uid=%u",
                     (unsigned)uid);
    crypto_generichash(mac, sizeof mac, (const unsigned char *)msg,
                       (unsigned long long)n, key, USER_KEY_LEN);
    sodium_bin2hex(hex, 2 * USER_KEY_LEN + 1, mac, sizeof mac);
    sodium_memzero(mac, sizeof mac);
}

int user_token_issue(const sd_daemon *d, uid_t uid, char *out, size_t len,
                     char *err, size_t errlen)
{
    unsigned char key[USER_KEY_LEN];
    char hex[2 * USER_KEY_LEN + 1];
    if (user_key(d, 1, key, err, errlen) < 0)
        return -1;
    user_mac(key, uid, hex);
    snprintf(out, len, "%u:%s", (unsigned)uid, hex);
    sodium_memzero(key, sizeof key);
    sodium_memzero(hex, sizeof hex);
    return 0;
}

int user_token_check(const sd_daemon *d, const char *cred, uid_t *uid)
{
    unsigned char key[USER_KEY_LEN];
    char hex[2 * USER_KEY_LEN + 1], err[256];
    const char *p = cred;
    uintmax_t v = 0;
    if (*p < '0' || *p > '9')
        return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        v = v * 10 + (uintmax_t)(*p - '0');
        if (v >= (uid_t)-1)
            return -1; /* no such uid; (uid_t)-1 is "nobody known" */
    }
    if (*p != ':' || user_key(d, 0, key, err, sizeof err) < 0)
        return -1;
    user_mac(key, (uid_t)v, hex);
    int ok = sd_secret_equal(p + 1, hex);
    sodium_memzero(key, sizeof key);
    sodium_memzero(hex, sizeof hex);
    if (!ok)
        return -1;
    *uid = (uid_t)v;
    return 0;
}
