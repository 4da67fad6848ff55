/*
 * api_reply.h — the form of a reply to a request (api_reply.c): an error
 * reply, and a refusal of users.c's as one.
 */
#ifndef SLAQ_DAEMON_API_REPLY_H
#define SLAQ_DAEMON_API_REPLY_H

#include <jansson.h>

/* {"type":"result","ok":false,"code":code,"message":...}: a request
 * refused or failed (docs/protocol.md lists the codes). */
json_t *api_error(const char *code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A check of users.c's (user_may_*) as a reply: NULL when it allowed
 * (rc 0), else a "permission_denied" error saying why. */
json_t *api_denied(int rc, const char *why);

#endif
