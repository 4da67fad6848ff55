/*
 * api_reply.c — the form of an error reply to a request, in the bottom
 * layer: api.c answers most requests, but some are answered by the jobs
 * layer (a sweep's requests in sweepd.c, an agent's answer to a suspend in
 * suspend.c), and a module may not include one above it. The form is
 * plain data, so it lives below all of them rather than each building
 * its own.
 */
#include <stdarg.h>
#include <stdio.h>

#include "daemon/api_reply.h"

json_t *api_error(const char *code, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return json_pack("{s:s, s:b, s:s, s:s}", "type", "result", "ok", 0,
                     "code", code, "message", msg);
}

json_t *api_denied(int rc, const char *why)
{
    return rc < 0 ? api_error("permission_denied", "%s", why) : NULL;
}
