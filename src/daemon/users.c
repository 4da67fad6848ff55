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
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/daemon.h"

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
