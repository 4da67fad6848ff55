/*
 * api.h — the requests the socket and HTTP share (api.c): a JSON object
 * with "type" in, a reply object out.
 */
#ifndef SLAQ_DAEMON_API_H
#define SLAQ_DAEMON_API_H

#include <jansson.h>

typedef struct sd_daemon sd_daemon;
typedef struct sd_user sd_user;

#define SD_LS_PAGE 1000               /* jobs in one ls reply at most */
#define SD_HISTORY_PAGE 5000          /* reports in one history page */

/* A request (a JSON object with "type") -> a reply object. */
/* 1 if the request changes state (submit, cancel, setting the policy):
 * only peers with the control credential may make it. */
int api_needs_control(json_t *req);
/* A request from `who`; the per-user rules (docs/security.md) are
 * checked here. api_handle is the HTTP API's: a reader that may act on
 * nothing. */
json_t *api_handle_as(sd_daemon *d, json_t *req, const sd_user *who);
json_t *api_handle(sd_daemon *d, json_t *req);
json_t *api_error(const char *code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A check of users.c's (user_may_*) as a reply: NULL when it allowed
 * (rc 0), else a "permission_denied" error saying why. */
json_t *api_denied(int rc, const char *why);

#endif
