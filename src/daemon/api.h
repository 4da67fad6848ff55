/*
 * api.h — the requests the socket and HTTP share (api.c): a JSON object
 * with "type" in, a reply object out (an error reply's form is
 * api_reply.h's).
 */
#ifndef SLAQ_DAEMON_API_H
#define SLAQ_DAEMON_API_H

#include <jansson.h>

#include "daemon/api_reply.h"

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

#endif
