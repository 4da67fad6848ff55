/*
 * users.h — who a peer is, running a job as its owner, and who may act
 * on which job (users.c).
 */
#ifndef SLAQ_DAEMON_USERS_H
#define SLAQ_DAEMON_USERS_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct sd_daemon sd_daemon;
typedef struct sd_job sd_job;

/*
 * A user as slaqd sees one (users.c): the peer of a connection, decided by
 * the kernel (SO_PEERCRED) on the Unix socket, or the owner of a job.
 */
typedef struct sd_user {
    uid_t uid;
    gid_t gid;            /* primary group (passwd; the peer's if unknown) */
    char name[64];        /* passwd name, or the uid in digits */
    int admin;            /* may act on every job and on slaqd itself */
    int reader;           /* the HTTP API: reads only, acts on nothing */
} sd_user;

/* The user with this uid as slaqd names it: passwd's name and primary
 * group (the uid in digits and `gid` when passwd has no entry), and
 * whether it administers slaqd (root, slaqd's own user, --allow-uid, or a
 * member of --admin-group). */
void user_from_uid(const sd_daemon *d, uid_t uid, gid_t gid, sd_user *out);
/* slaqd's own user (what the TCP control token acts as). */
void user_self(const sd_daemon *d, sd_user *out);
/* 1 if slaqd may start jobs as users other than its own (it is root). */
int user_can_switch(void);
/* Whether `who` may submit a job (run code as itself): 0, or -1 with
 * why filled (a "permission_denied" reply's message: api_denied). */
int user_may_submit(const sd_daemon *d, const sd_user *who, char *why,
                    size_t len);
/* Whether `who` may `verb` ("cancel", "suspend", ...) job j: 0, or -1
 * with why naming j's owner. */
int user_may_act(const sd_user *who, const sd_job *j, const char *verb,
                 char *why, size_t len);
/* The same for anything else with an owner (`what`: "sweep 2"). */
int user_may_act_on(const sd_user *who, uid_t owner, const char *owner_name,
                    const char *what, const char *verb, char *why,
                    size_t len);
/* Whether `who` may make a daemon-wide change (`what`, e.g. "set the
 * policy"): 0, or -1 with why filled. */
int user_may_admin(const sd_user *who, const char *what, char *why,
                   size_t len);
/* How long a user credential is valid unless the request says (30 days),
 * and at most (a year). */
#define USER_TOKEN_DEFAULT_S (30 * 86400)
#define USER_TOKEN_MAX_S (366 * 86400)
/* The TCP credential of uid, valid until expires (Unix seconds):
 * "UID:EXPIRES:GENERATION:HEX" (docs/security.md) into out; makes
 * STATE/user-token.key on first use. 0, or -1 with err set. */
int user_token_issue(const sd_daemon *d, uid_t uid, long long expires,
                     char *out, size_t len, char *err, size_t errlen);
/* uid's credential generation (0 until the first revocation). 0, or -1
 * with err set when STATE/user-token.gen cannot be read. */
int user_token_generation(const sd_daemon *d, uid_t uid, unsigned *gen,
                          char *err, size_t errlen);
/* Revokes every credential of uid: its generation moves on (*gen the new
 * one), written to STATE/user-token.gen before this returns 0; -1 with
 * err set if it could not be written (nothing is revoked then). */
int user_token_revoke(const sd_daemon *d, uid_t uid, unsigned *gen,
                      char *err, size_t errlen);
/* The key of a sealed session claiming identity as ("UID:EXPIRES:
 * GENERATION", a credential without its secret): the secret slaqd would
 * have issued with it, into key (32 bytes), and its uid. -1 with err
 * filled with what the user should do when as is malformed, expired, of
 * an older generation, or no credential was ever issued (no key). */
int user_session_key(const sd_daemon *d, const char *as,
                     unsigned char key[32], uid_t *uid, char *err,
                     size_t errlen);
/* Resolves a group name (or number) for --admin-group / --socket-group;
 * 0, or -1 after printing an error that starts with where. */
int user_group_parse(const char *where, const char *name, gid_t *out);

/* Everything the child needs to become a job's owner, looked up before
 * fork (getpwuid and getgrouplist are not safe after it). */
typedef struct sd_runas {
    int switch_user;      /* 0: the job runs as slaqd's own user */
    uid_t uid;
    gid_t gid;
    gid_t *groups;        /* supplementary groups (initgroups' list) */
    int ngroups;
    char *home, *shell, *name;
} sd_runas;
/* Fills r for running a job of `uid` (named `user`): 0, or -1 with err
 * ("user alice (uid 1001) has no passwd entry on this machine", "slaqd
 * runs as bob, not root: ..."). */
int user_runas_prepare(const sd_daemon *d, uid_t uid, const char *user,
                       sd_runas *r, char *err, size_t errlen);
/* In the child, after fork: becomes r's user (groups, gid, uid); 0 or -1
 * with errno. */
int user_runas_become(const sd_runas *r);
void user_runas_free(sd_runas *r);

#endif
