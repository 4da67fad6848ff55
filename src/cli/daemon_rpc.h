/*
 * daemon_rpc.h — what the slaq subcommands that drive slaqd share: finding
 * its socket, one request/reply over it, the common options, and a few
 * formatting helpers.
 *
 * Requests and replies are the control messages of docs/protocol.md: one
 * JSON object per line, the reply {"ok":true,...} or {"ok":false,"code",
 * "message"}.
 */
#ifndef SLAQ_CLI_DAEMON_RPC_H
#define SLAQ_CLI_DAEMON_RPC_H

#include <jansson.h>
#include <stdio.h>

/* The socket of slaqd run as a service (dist/slaqd.service), used when
 * there is no ./var/slaq.sock and neither --socket nor SLAQ_SOCKET. */
#define RPC_SYSTEM_SOCKET "/run/slaq/slaq.sock"

/* Where a user's TCP credential is kept (`slaq token --save`), under
 * $HOME, when SLAQ_USER_TOKEN is not set. */
#define RPC_TOKEN_FILE ".config/slaq/token"

/* Options every daemon command takes. */
typedef struct rpc_opts {
    const char *socket;    /* --socket, else $SLAQ_SOCKET, else STATE/slaq.sock */
    const char *host;      /* --host HOST:PORT: slaqd over TCP (else
                              $SLAQ_HOST when no --socket/--state-dir) */
    int local;             /* the Unix socket even when SLAQ_HOST is set */
    const char *state_dir; /* --state-dir (default ./var) */
    int json;              /* --json: print slaqd's reply as JSON */
} rpc_opts;

/* Long options shared by the daemon commands, to append to a command's
 * table; rpc_opt() handles their codes (>= RPC_OPT_BASE). */
enum { RPC_OPT_BASE = 1000, RPC_OPT_SOCKET = RPC_OPT_BASE, RPC_OPT_STATE,
       RPC_OPT_JSON, RPC_OPT_HOST };
#define RPC_LONG_OPTS                                                        \
    {"socket", required_argument, 0, RPC_OPT_SOCKET},                        \
    {"host", required_argument, 0, RPC_OPT_HOST},                            \
    {"state-dir", required_argument, 0, RPC_OPT_STATE},                      \
    {"json", no_argument, 0, RPC_OPT_JSON}
/* Where slaqd is: the part of RPC_HELP a command with its own --json
 * text prints. */
#define RPC_HELP_WHERE                                                       \
    "  --socket PATH     slaqd's socket (default $SLAQ_SOCKET, else\n"       \
    "                    ./var/slaq.sock, else the service's\n"             \
    "                    " RPC_SYSTEM_SOCKET ")\n"                          \
    "  --host HOST:PORT  slaqd over TCP (slaqd --tcp) in a sealed session,\n"\
    "                    as the user of the credential in\n"               \
    "                    $SLAQ_USER_TOKEN, else ~/" RPC_TOKEN_FILE "\n"    \
    "                    (`slaq token --save`; admin:TOKEN for the\n"      \
    "                    control token); default $SLAQ_HOST when no\n"     \
    "                    --socket or --state-dir is given\n"               \
    "  --state-dir DIR   slaqd's state directory (default ./var)\n"
#define RPC_HELP                                                             \
    RPC_HELP_WHERE                                                           \
    "  --json            print slaqd's reply as JSON\n"                      \
    "  -h, --help        this help\n"

void rpc_opts_init(rpc_opts *o);
/* Handles a shared option code; returns 1 if it was one, else 0.
 * --host with --socket or --state-dir is refused when a request is made
 * (rpc_call). */
int rpc_opt(rpc_opts *o, int code, const char *arg);

/*
 * The whole argument parsing of a command that takes only the shared
 * options and between min_ops and max_ops operands: fills *o and returns
 * -1 to go on (operands from optind), or the status to exit with (0 after
 * --help; EXIT_USAGE after printing `what` or the usage).
 */
int rpc_parse_args(const char *cmd, int argc, char **argv, rpc_opts *o,
                   void (*usage)(FILE *), int min_ops, int max_ops,
                   const char *what);

/*
 * Takes a command's own flag (e.g. "--now") out of argv before a "--", so
 * that rpc_parse_args() sees only the shared options; returns 1 if it was
 * there (once or more), else 0. *argc shrinks and argv stays
 * NULL-terminated.
 */
int rpc_take_flag(int *argc, char **argv, const char *flag);

/*
 * Sends req (stolen) to slaqd and returns its reply (a new reference), or
 * NULL after printing "slaq CMD: ..." when slaqd cannot be reached (or,
 * over TCP, there is no user credential to show). An {"ok":false} reply
 * is returned as is.
 */
json_t *rpc_call(const char *cmd, const rpc_opts *o, json_t *req);

/* Prints an {"ok":false} reply as "slaq CMD: message" and returns 1 (or 2
 * for a request slaqd found malformed). */
int rpc_fail(const char *cmd, json_t *reply);

/*
 * One request the usual way: sends req (stolen) and, unless the caller has
 * to print the reply in its own format, finishes the command. Returns -1
 * with *reply set (the caller prints and frees it), or the exit status:
 * 1 when slaqd cannot be reached, rpc_fail()'s status for an
 * {"ok":false} reply, 0 after printing the reply for --json.
 */
int rpc_exchange(const char *cmd, const rpc_opts *o, json_t *req,
                 json_t **reply);

/* Prints v as indented JSON on stdout. */
void rpc_print_json(json_t *v);

/* Appends to out a sparkline (one block character per value) of the
 * numbers in arr, scaled between lo and hi (NAN: the array's own range). */
void rpc_sparkline(char *out, size_t len, json_t *arr, double lo, double hi);

/*
 * s escaped by text_escape (src/io/text.h): control characters (C0, DEL,
 * C1) and malformed UTF-8 as \xNN, bidirectional controls such as U+202E
 * as \uXXXX, so that a job's name or command can neither move the cursor,
 * rewrite the terminal nor show itself reversed (NULL prints as "-"). Returns one of a few rotating static buffers:
 * valid until a few more calls, enough for one printf.
 */
const char *rpc_safe(const char *s);

/* Number field or NAN. */
double rpc_num(json_t *obj, const char *key);

/* A node object's capacity (docs/glossary.md), or NAN: its "capacity", or
 * the "cores" of a slaqd from before that key. */
double rpc_capacity(json_t *node);

/* "12.3s", "4m05s", "2h03m", "-" for a negative time. */
void rpc_duration(char *out, size_t len, double s);
/* A job's goal in a few words (docs/deadlines.md), for slaq ls's NOTE and
 * slaq show: its deadline slack ("due in 1h12m", "late by 5m00s", or
 * for a job that ended "on time by 3m10s") and whether its last metric
 * meets its required accuracy ("accuracy met", "accuracy not met", "no
 * metric yet"), joined by ", "; "" for a job without a goal. */
void rpc_goal_note(char *out, size_t len, json_t *job);
/* Its place under a policy of MLF-H's features (the job's "priority"
 * object), for slaq ls's NOTE: "mlfs-h #2 of 5"; "" without one. */
void rpc_priority_note(char *out, size_t len, json_t *job);

#endif
