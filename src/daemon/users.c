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
 * Over TCP there is no kernel to ask, so a user proves a credential slaqd
 * issued them over the Unix socket: "UID:EXPIRES:GENERATION:HEX", HEX a
 * keyed BLAKE2b hash of the other three under a random key that never
 * leaves STATE/user-token.key. It names one user and proves nothing about
 * any other. It is never sent: HEX is the key of a sealed session
 * (tcp_session.c, link.h) whose hello claims the rest, which slaqd checks
 * here: not expired, and the user's current generation (STATE/user-
 * token.gen; `slaq token --revoke` moves it on, revoking that user's
 * credentials alone). Deleting the key still revokes every credential.
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon/clock.h"
#include "daemon/daemon.h"
#include "daemon/loop.h"
#include "daemon/record.h"
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

int user_may_submit(const sd_daemon *d, const sd_user *who, char *why,
                    size_t len)
{
    char a[96], b[96];
    if (who->reader) {
        snprintf(why, len, "permission denied: the HTTP API only reads; "
                 "submit with the slaq command");
        return -1;
    }
    if (who->uid == geteuid() || user_can_switch())
        return 0;
    sd_user self;
    user_self(d, &self);
    snprintf(why, len, "permission denied: slaqd runs as %s, not root, so "
             "it runs only that user's jobs; a job of %s would run as %s. "
             "Ask for a slaqd run as root (the system service), or start "
             "your own slaqd", user_label(&self, a, sizeof a),
             user_label(who, b, sizeof b), self.name);
    return -1;
}

int user_may_act_on(const sd_user *who, uid_t owner, const char *owner_name,
                    const char *what, const char *verb, char *why,
                    size_t len)
{
    char a[96];
    if (who->reader) {
        snprintf(why, len, "permission denied: the HTTP API only reads; "
                 "%s %s with the slaq command", verb, what);
        return -1;
    }
    if (who->admin || who->uid == owner)
        return 0;
    snprintf(why, len, "permission denied: %s belongs to %s (uid %u); %s "
             "may not %s it (only its owner and slaqd's administrators: "
             "root, --allow-uid users and the --admin-group)", what,
             owner_name ? owner_name : "?", (unsigned)owner,
             user_label(who, a, sizeof a), verb);
    return -1;
}

int user_may_act(const sd_user *who, const sd_job *j, const char *verb,
                 char *why, size_t len)
{
    char what[32];
    snprintf(what, sizeof what, "job %lld", (long long)j->id);
    return user_may_act_on(who, j->uid, j->user, what, verb, why, len);
}

int user_may_admin(const sd_user *who, const char *what, char *why,
                   size_t len)
{
    char a[96];
    if (who->reader) {
        snprintf(why, len, "permission denied: the HTTP API only reads; "
                 "%s with the slaq command", what);
        return -1;
    }
    if (who->admin)
        return 0;
    snprintf(why, len, "permission denied: only slaqd's administrators "
             "(root, --allow-uid users and the --admin-group) may %s; %s is "
             "not one", what, user_label(who, a, sizeof a));
    return -1;
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

/* The generations file: "UID GENERATION" lines, one per user who ever
 * revoked their credentials; a user not in it is at generation 0. */
#define USER_GEN_FILE "user-token.gen"
#define USER_GEN_MAX (1 << 20) /* bytes of it read at most */

/* Reads the generations file into a malloc'ed, NUL-terminated *text (""
 * when it does not exist yet). 0, or -1 with err set. */
static int gen_load(const sd_daemon *d, char **text, char *err,
                    size_t errlen)
{
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/" USER_GEN_FILE, d->cfg.state_dir);
    *text = NULL;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        if (!(*text = calloc(1, 1)))
            snprintf(err, errlen, "out of memory reading %s", path);
        return *text ? 0 : -1;
    }
    if (fd < 0 || fstat(fd, &st) < 0) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        goto out;
    }
    if (st.st_size > USER_GEN_MAX) {
        snprintf(err, errlen, "cannot read %s: larger than 1 MiB", path);
        goto out;
    }
    *text = calloc(1, (size_t)st.st_size + 1);
    ssize_t n = *text ? read(fd, *text, (size_t)st.st_size) : -1;
    if (n != st.st_size) {
        snprintf(err, errlen, "cannot read %s: %s", path,
                 n < 0 ? strerror(errno) : "it changed while read");
        free(*text);
        *text = NULL;
    }
out:
    if (fd >= 0)
        close(fd);
    return *text ? 0 : -1;
}

/* uid's generation in text (gen_load's), 0 if it has no line. */
static unsigned gen_find(const char *text, uid_t uid)
{
    for (const char *p = text; p && *p;) {
        unsigned long u, g;
        if (sscanf(p, "%lu %lu", &u, &g) == 2 && u == (unsigned long)uid)
            return (unsigned)g;
        p = strchr(p, '\n');
        p = p ? p + 1 : NULL;
    }
    return 0;
}

int user_token_generation(const sd_daemon *d, uid_t uid, unsigned *gen,
                          char *err, size_t errlen)
{
    char *text;
    if (gen_load(d, &text, err, errlen) < 0)
        return -1;
    *gen = gen_find(text, uid);
    free(text);
    return 0;
}

int user_token_revoke(const sd_daemon *d, uid_t uid, unsigned *gen,
                      char *err, size_t errlen)
{
    char path[4096], tmp[4200], *text;
    snprintf(path, sizeof path, "%s/" USER_GEN_FILE, d->cfg.state_dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    if (gen_load(d, &text, err, errlen) < 0)
        return -1;
    *gen = gen_find(text, uid) + 1;
    FILE *f = NULL;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
                  0600);
    if (fd < 0 || !(f = fdopen(fd, "w")))
        goto err;
    /* Every other user's line as it was, then this user's new one. */
    for (char *p = text, *nl; *p; p = nl + 1) {
        unsigned long u, g;
        nl = strchr(p, '\n');
        if (!nl)
            break;
        if (sscanf(p, "%lu %lu", &u, &g) == 2 && u != (unsigned long)uid)
            fprintf(f, "%lu %lu\n", u, g);
    }
    fprintf(f, "%lu %u\n", (unsigned long)uid, *gen);
    if (fflush(f) != 0 || fsync(fd) < 0)
        goto err;
    fclose(f);
    f = NULL;
    fd = -1;
    if (rename(tmp, path) < 0)
        goto err;
    /* The rename itself must reach the disk: a revocation is lost if not. */
    int dfd = open(d->cfg.state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    free(text);
    return 0;
err:
    snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
    if (f)
        fclose(f);
    else if (fd >= 0)
        close(fd);
    unlink(tmp);
    free(text);
    return -1;
}

/* The secret of a credential: keyed BLAKE2b of its identity (uid, expiry,
 * generation), so that none of the three can be changed without the key. */
static void user_mac(const unsigned char key[USER_KEY_LEN], uid_t uid,
                     long long expires, unsigned gen,
                     unsigned char mac[USER_KEY_LEN])
{
    char msg[128];
    int n = snprintf(msg, sizeof msg, "slaq user credential 2 uid=%u "
                     "expires=%lld generation=%u", (unsigned)uid, expires,
                     gen);
    crypto_generichash(mac, USER_KEY_LEN, (const unsigned char *)msg,
                       (unsigned long long)n, key, USER_KEY_LEN);
}

int user_token_issue(const sd_daemon *d, uid_t uid, long long expires,
                     char *out, size_t len, char *err, size_t errlen)
{
    unsigned char key[USER_KEY_LEN], mac[USER_KEY_LEN];
    char hex[2 * USER_KEY_LEN + 1];
    unsigned gen;
    if (user_key(d, 1, key, err, errlen) < 0 ||
        user_token_generation(d, uid, &gen, err, errlen) < 0)
        return -1;
    user_mac(key, uid, expires, gen, mac);
    sodium_bin2hex(hex, sizeof hex, mac, sizeof mac);
    snprintf(out, len, "%u:%lld:%u:%s", (unsigned)uid, expires, gen, hex);
    sodium_memzero(key, sizeof key);
    sodium_memzero(mac, sizeof mac);
    sodium_memzero(hex, sizeof hex);
    return 0;
}

/* Parses a decimal number of at most max from *p on, advancing *p; -1 if
 * there is none or it is larger. */
static int parse_num(const char **p, uintmax_t max, uintmax_t *out)
{
    uintmax_t v = 0;
    if (**p < '0' || **p > '9')
        return -1;
    for (; **p >= '0' && **p <= '9'; (*p)++) {
        v = v * 10 + (uintmax_t)(**p - '0');
        if (v > max)
            return -1;
    }
    *out = v;
    return 0;
}

/* "2026-12-31 12:00:00 UTC" */
static void utc_text(long long t, char *buf, size_t len)
{
    time_t tt = (time_t)t;
    struct tm tm;
    if (!gmtime_r(&tt, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm))
        snprintf(buf, len, "%lld", t);
}

int user_session_key(const sd_daemon *d, const char *as,
                     unsigned char key[USER_KEY_LEN], uid_t *uid, char *err,
                     size_t errlen)
{
    static const char *const todo = "run `slaq token --save` on the machine "
                                    "slaqd runs on";
    unsigned char k[USER_KEY_LEN];
    uintmax_t u, exp, gen;
    const char *p = as;
    char when[64];
    unsigned now_gen;
    /* (uid_t)-1 is "nobody known"; generations are unsigned. */
    if (parse_num(&p, (uid_t)-2, &u) < 0 || *p++ != ':' ||
        parse_num(&p, (uintmax_t)1 << 40, &exp) < 0 || *p++ != ':' ||
        parse_num(&p, 0xffffffffu, &gen) < 0 || *p) {
        snprintf(err, errlen, "\"%.63s\" is not a user credential's "
                 "UID:EXPIRES:GENERATION (an older credential?): %s", as,
                 todo);
        return -1;
    }
    utc_text((long long)exp, when, sizeof when);
    if ((double)exp <= sd_now()) {
        snprintf(err, errlen, "the credential of uid %ju expired on %s: %s",
                 u, when, todo);
        return -1;
    }
    if (user_token_generation(d, (uid_t)u, &now_gen, err, errlen) < 0)
        return -1;
    if (gen != now_gen) {
        snprintf(err, errlen, "the credential of uid %ju was revoked (`slaq "
                 "token --revoke`): %s", u, todo);
        return -1;
    }
    if (user_key(d, 0, k, err, errlen) < 0)
        return -1;
    user_mac(k, (uid_t)u, (long long)exp, (unsigned)gen, key);
    sodium_memzero(k, sizeof k);
    *uid = (uid_t)u;
    return 0;
}
