/*
 * http.c — slaqd's HTTP API (libmicrohttpd), read-only JSON for dashboards
 * and `curl`.
 *
 * libmicrohttpd runs without threads of its own: it keeps an epoll set
 * whose descriptor sits in slaqd's loop, and MHD_run() is called when that
 * becomes readable and on every tick (for its timeouts). Handlers therefore
 * run on the loop thread and read the state directly.
 *
 * The API only reads. Anything that starts or stops processes goes through
 * the Unix socket, whose file mode (0600) is the access control; a TCP port
 * on 127.0.0.1 is open to every local user.
 *
 *   GET /api/status        as `slaq status --json`
 *   GET /api/jobs          as `slaq ls --json`
 *   GET /api/jobs/ID       as `slaq show ID --json`
 *   GET /api/policy        the current policy
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/daemon.h"

static enum MHD_Result reply(struct MHD_Connection *con, unsigned status,
                             json_t *body)
{
    char *s = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    if (!s)
        return MHD_NO;
    size_t len = strlen(s);
    s[len] = 0;
    struct MHD_Response *r = MHD_create_response_from_buffer(
        len, s, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(s);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", "application/json");
    MHD_add_response_header(r, "Cache-Control", "no-store");
    enum MHD_Result rc = MHD_queue_response(con, status, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *con,
                                  const char *url, const char *method,
                                  const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    sd_daemon *d = cls;
    (void)version;
    (void)upload;
    (void)con_cls;
    if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
        *upload_size = 0;
        return reply(con, MHD_HTTP_METHOD_NOT_ALLOWED,
                     api_error("read_only", "the HTTP API only reads; use the "
                               "slaq command (the Unix socket) to change "
                               "anything"));
    }
    json_t *req = NULL;
    if (!strcmp(url, "/api/status"))
        req = json_pack("{s:s}", "type", "status");
    else if (!strcmp(url, "/api/jobs"))
        req = json_pack("{s:s}", "type", "ls");
    else if (!strcmp(url, "/api/policy"))
        req = json_pack("{s:s}", "type", "policy");
    else if (!strncmp(url, "/api/jobs/", 10))
        req = json_pack("{s:s, s:s}", "type", "show", "job", url + 10);
    if (!req)
        return reply(con, MHD_HTTP_NOT_FOUND,
                     api_error("not_found", "no such endpoint: %.200s", url));
    json_t *r = api_handle(d, req);
    json_decref(req);
    unsigned status = MHD_HTTP_OK;
    if (json_is_false(json_object_get(r, "ok"))) {
        const char *code = json_string_value(json_object_get(r, "code"));
        status = code && !strcmp(code, "unknown_job") ? MHD_HTTP_NOT_FOUND
                                                      : MHD_HTTP_BAD_REQUEST;
    }
    return reply(con, status, r);
}

int http_start(sd_daemon *d, const char *addr, char *err, size_t errlen)
{
    char host[256];
    const char *colon = strrchr(addr, ':');
    char *end;
    long port = colon ? strtol(colon + 1, &end, 10) : -1;
    struct sockaddr_in sa = {.sin_family = AF_INET};
    if (!colon || (size_t)(colon - addr) >= sizeof host || *end || port < 0 ||
        port > 65535) {
        snprintf(err, errlen, "expected ADDR:PORT (port 0 picks a free one)");
        return -1;
    }
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = 0;
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
        snprintf(err, errlen, "'%s' is not an IPv4 address", host);
        return -1;
    }
    sa.sin_port = htons((uint16_t)port);
    struct MHD_Daemon *m = MHD_start_daemon(
        MHD_USE_EPOLL, (uint16_t)port, NULL, NULL, on_request, d,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
        MHD_OPTION_CONNECTION_TIMEOUT, 30u,
        MHD_OPTION_CONNECTION_LIMIT, 256u, MHD_OPTION_END);
    if (!m) {
        snprintf(err, errlen, "cannot listen (address in use?)");
        return -1;
    }
    const union MHD_DaemonInfo *ep =
        MHD_get_daemon_info(m, MHD_DAEMON_INFO_EPOLL_FD);
    const union MHD_DaemonInfo *pi =
        MHD_get_daemon_info(m, MHD_DAEMON_INFO_BIND_PORT);
    if (!ep) {
        MHD_stop_daemon(m);
        snprintf(err, errlen, "libmicrohttpd has no epoll descriptor");
        return -1;
    }
    d->http = m;
    d->http_h.fd = ep->epoll_fd;
    d->http_port = pi ? pi->port : (unsigned)port;
    char path[4096];
    snprintf(path, sizeof path, "%s/http.port", d->cfg.state_dir);
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "%u\n", d->http_port);
        fclose(f);
    }
    return 0;
}

void http_run(sd_daemon *d)
{
    if (d->http)
        MHD_run(d->http);
}

void http_stop(sd_daemon *d)
{
    if (!d->http)
        return;
    sd_epoll_del(d, &d->http_h);
    MHD_stop_daemon(d->http);
    d->http = NULL;
    d->http_h.fd = -1;
}
