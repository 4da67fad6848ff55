/*
 * http.c — slaqd's HTTP side (libmicrohttpd): the dashboard page, read-only
 * JSON for it and for `curl`, and Prometheus metrics.
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
 *   GET /api/shares        as `slaq share --json`: accounts and users
 *   GET /api/timeline[?since=T]  every job's normalised loss and cores
 *                          over time (the frames after T)
 *   GET /api/jobs/ID/forecast  the job's reports and its forecast ahead
 *   GET /api/sweeps        as `slaq sweep ls --json`
 *   GET /api/sweeps/ID     as `slaq sweep show ID --json`, with curves
 *   GET /api/jobs/ID/history?after=ITER&limit=N  a page of its reports
 *   GET /api/jobs/ID/estimates   a query's estimates and bounds (aqpd.c)
 *   GET /metrics           Prometheus text format
 *   GET /, /app.js, ...    the dashboard (web/, compiled in)
 *   GET /chart.js          Chart.js, read from Debian's libjs-chart.js
 *
 * The page's own files are embedded in the binary, so an installed slaqd
 * needs no source tree; Chart.js stays Debian's file (its security updates
 * apply without rebuilding slaqd) and is read when asked for.
 */
#include <arpa/inet.h>
#include <math.h>
#include <sys/socket.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "daemon/api.h"
#include "daemon/aqpd.h"
#include "daemon/clock.h"
#include "daemon/counters.h"
#include "daemon/daemon.h"
#include "daemon/http.h"
#include "daemon/jobs.h"
#include "daemon/loop.h"
#include "daemon/store.h"
#include "daemon/sweepd.h"
#include "daemon/trace.h"

/*
 * The total header deadline. libmicrohttpd's timeout is an idle timeout:
 * a client trickling a header byte every few seconds (slowloris) would
 * hold its connection for ever. So each connection is tracked from when
 * it opens (or its previous request completed) until its request's
 * headers are whole (the first call of on_request); one still waiting
 * after SD_HTTP_HEADER_S is shut down, which libmicrohttpd then closes.
 */
typedef struct http_conn {
    struct http_conn *prev, *next;
    int fd;
    double since;         /* monotonic: opened or previous request done */
    int headers_done;     /* the current request's headers arrived */
    uint32_t addr;        /* the client's IPv4 address */
} http_conn;

/*
 * Room for the next client. libmicrohttpd refuses a connection beyond its
 * per-address or total limit, so on one machine (every client 127.0.0.1) a
 * slowloris holding SD_HTTP_PER_IP connections would lock the dashboard
 * out for as long as it trickles. So before those limits are reached, a
 * new connection shuts down the oldest connection of its address (or of
 * all, near the total) that is waiting for a request's headers: a slow or
 * idle one. A client whose request is whole is never taken; one that
 * keeps its connection idle opens another.
 */
#define SD_HTTP_ROOM_PER_IP (SD_HTTP_PER_IP / 2)
#define SD_HTTP_ROOM_TOTAL (SD_HTTP_MAX_CONNS - SD_HTTP_PER_IP)

static http_conn *http_conns; /* one slaqd per process */
static double http_sweep_last;

/* Shuts down the oldest connection waiting for headers, of address
 * `addr` when it holds SD_HTTP_ROOM_PER_IP or more, or of any address when
 * SD_HTTP_ROOM_TOTAL or more are open (see SD_HTTP_ROOM_PER_IP). */
static void make_room(uint32_t addr)
{
    size_t mine = 0, all = 0;
    http_conn *old_mine = NULL, *old_all = NULL;
    for (http_conn *h = http_conns; h; h = h->next) {
        if (h->fd < 0)
            continue; /* already shut down */
        all++;
        mine += h->addr == addr;
        if (h->headers_done)
            continue;
        if (!old_all || h->since < old_all->since)
            old_all = h;
        if (h->addr == addr && (!old_mine || h->since < old_mine->since))
            old_mine = h;
    }
    http_conn *victim = mine + 1 > SD_HTTP_ROOM_PER_IP ? old_mine
                        : all + 1 > SD_HTTP_ROOM_TOTAL ? old_all : NULL;
    if (victim) {
        shutdown(victim->fd, SHUT_RDWR);
        victim->fd = -1; /* libmicrohttpd closes it and says so */
    }
}

static void on_connection(void *cls, struct MHD_Connection *con,
                          void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    (void)cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        http_conn *h = calloc(1, sizeof *h);
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(con, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (!h || !ci) {
            free(h);
            return; /* not tracked: only the idle timeout applies */
        }
        h->fd = ci->connect_fd;
        h->since = sd_mono();
        const union MHD_ConnectionInfo *ai =
            MHD_get_connection_info(con, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        if (ai && ai->client_addr && ai->client_addr->sa_family == AF_INET)
            h->addr = ((const struct sockaddr_in *)(const void *)
                       ai->client_addr)->sin_addr.s_addr;
        make_room(h->addr);
        h->next = http_conns;
        if (http_conns)
            http_conns->prev = h;
        http_conns = h;
        *socket_context = h;
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
        http_conn *h = *socket_context;
        if (h->prev)
            h->prev->next = h->next;
        else
            http_conns = h->next;
        if (h->next)
            h->next->prev = h->prev;
        free(h);
        *socket_context = NULL;
    }
}

static http_conn *conn_of(struct MHD_Connection *con)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(con, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* A request was answered: the deadline starts again for the next one on
 * the same (kept-alive) connection. */
static void on_completed(void *cls, struct MHD_Connection *con,
                         void **con_cls, enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)con_cls;
    (void)toe;
    http_conn *h = conn_of(con);
    if (h) {
        h->since = sd_mono();
        h->headers_done = 0;
    }
}

/* Shuts down connections whose headers are overdue (twice a second). */
static void header_sweep(sd_daemon *d)
{
    double now = sd_mono();
    if (now - http_sweep_last < 0.5)
        return;
    http_sweep_last = now;
    for (http_conn *h = http_conns; h; h = h->next)
        if (!h->headers_done && h->fd >= 0 &&
            now - h->since > SD_HTTP_HEADER_S) {
            shutdown(h->fd, SHUT_RDWR);
            h->fd = -1; /* once; libmicrohttpd closes it and says so */
            d->http_header_timeouts++;
        }
}

/* Where Debian's libjs-chart.js installs the minified Chart.js. */
#define HTTP_CHARTJS "/usr/share/javascript/chart.js/chart.min.js"

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

static enum MHD_Result reply_bytes(struct MHD_Connection *con,
                                   unsigned status, const char *type,
                                   void *data, size_t len,
                                   enum MHD_ResponseMemoryMode mode)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, data, mode);
    if (!r) {
        if (mode == MHD_RESPMEM_MUST_FREE)
            free(data);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "Cache-Control", "no-store");
    enum MHD_Result rc = MHD_queue_response(con, status, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result reply_text(struct MHD_Connection *con, unsigned status,
                                  const char *text)
{
    return reply_bytes(con, status, "text/plain; charset=utf-8",
                       (void *)text, strlen(text), MHD_RESPMEM_MUST_COPY);
}

/* Chart.js from the Debian package, read per request (a browser asks once
 * per page load). Missing: a 404 that says which package provides it. */
static enum MHD_Result serve_chartjs(sd_daemon *d, struct MHD_Connection *con)
{
    FILE *f = fopen(HTTP_CHARTJS, "rb");
    char *buf = NULL;
    long len = -1;
    if (f && fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 &&
        fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)len + 1)) &&
        fread(buf, 1, (size_t)len, f) == (size_t)len) {
        fclose(f);
        return reply_bytes(con, MHD_HTTP_OK,
                           "text/javascript; charset=utf-8", buf,
                           (size_t)len, MHD_RESPMEM_MUST_FREE);
    }
    if (f)
        fclose(f);
    free(buf);
    sd_log(d, 0, "dashboard: cannot read %s (install the libjs-chart.js "
                 "package): the page's charts are off", HTTP_CHARTJS);
    return reply_text(con, MHD_HTTP_NOT_FOUND,
                      "Chart.js is missing: slaqd reads it from "
                      HTTP_CHARTJS ", which Debian's libjs-chart.js package "
                      "installs (apt-get install libjs-chart.js).\n");
}

/* Writes s as a Prometheus label value (backslash, quote, newline escaped). */
static void prom_label(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '\\' || *s == '"') {
            fputc('\\', f);
            fputc(*s, f);
        } else if (*s == '\n')
            fputs("\\n", f);
        else
            fputc(*s, f);
    }
}

static void prom_head(FILE *f, const char *name, const char *type,
                      const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One gauge or counter per job: NAME{job="ID",name="NAME"} VALUE. */
static void prom_job(FILE *f, const char *name, const sd_job *j, double v)
{
    fprintf(f, "%s{job=\"%lld\",name=\"", name, (long long)j->id);
    prom_label(f, j->name);
    fprintf(f, "\"} %.17g\n", v);
}

/* The shares between users: per account and user (kind, name), its
 * share, part, cores held, decayed usage and jobs. Names are the tree's
 * ([A-Za-z0-9._@-]), so they need no escaping. */
static void share_metrics(sd_daemon *d, FILE *f)
{
    static const struct {
        const char *name, *help;
    } g[] = {
        {"slaq_share_normalized", "Each account's and user's normalised "
         "share of the cluster (slaq share's SHARE)."},
        {"slaq_share_part_cores", "The cores each account and user was "
         "given at the last division."},
        {"slaq_share_cores", "The cores each account's and user's jobs "
         "held after the last epoch."},
        {"slaq_share_usage_core_seconds", "Each account's and user's "
         "decayed usage (share-half-life)."},
        {"slaq_share_jobs", "Each account's and user's active jobs."},
    };
    if (!d->shares || !d->cfg.fair_share)
        return;
    for (size_t k = 0; k < sizeof g / sizeof *g; k++) {
        prom_head(f, g[k].name, "gauge", g[k].help);
        for (size_t i = 1; i < slaq_shares_count(d->shares); i++) {
            const slaq_share_entry *e = slaq_shares_at(d->shares, (int)i);
            double v[] = {e->share, e->part, e->cores, e->usage,
                          (double)e->jobs};
            fprintf(f, "%s{kind=\"%s\",name=\"%s\"} %.17g\n", g[k].name,
                    e->user ? "user" : "account", e->name, v[k]);
        }
    }
}

/* GET /metrics: the Prometheus text exposition format (version 0.0.4). */
static enum MHD_Result serve_metrics(sd_daemon *d, struct MHD_Connection *con)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return MHD_NO;
    const slaq_sched_config *c = slaq_sched_get_config(d->sched);
    size_t count[SD_PENDING + 1] = {0};
    for (size_t i = 0; i < d->njobs; i++)
        if (d->jobs[i])
            count[d->jobs[i]->state]++;
    prom_head(f, "slaq_jobs", "gauge", "Jobs by state.");
    for (int st = SD_RUNNING; st <= SD_PENDING; st++)
        fprintf(f, "slaq_jobs{state=\"%s\"} %zu\n",
                job_state_name((sd_state)st), count[st]);
    prom_head(f, "slaq_policy_info", "gauge", "The policy in force (1).");
    fprintf(f, "slaq_policy_info{policy=\"%s\"} 1\n",
            slaq_policy_name(c->policy));
    size_t n = slaq_sched_count(d->sched);
    prom_head(f, "slaq_job_cores", "gauge",
              "Cores allocated to each active job by the last epoch.");
    for (size_t i = 0; i < n; i++) {
        const sd_job *j = slaq_job_user(slaq_sched_job(d->sched, i));
        prom_job(f, "slaq_job_cores", j, j->enf.alloc);
    }
    prom_head(f, "slaq_job_reports_total", "counter",
              "Iteration reports accepted from each active job.");
    for (size_t i = 0; i < n; i++) {
        const sd_job *j = slaq_job_user(slaq_sched_job(d->sched, i));
        prom_job(f, "slaq_job_reports_total", j, (double)j->hist.nreports);
    }
    prom_head(f, "slaq_job_predictor_error", "gauge",
              "Per active job: mean absolute error of its forecasts one "
              "epoch ahead, in units of its loss range.");
    for (size_t i = 0; i < n; i++) {
        const sd_job *j = slaq_job_user(slaq_sched_job(d->sched, i));
        if (!isnan(trace_forecast_error(j)))
            prom_job(f, "slaq_job_predictor_error", j,
                     trace_forecast_error(j));
    }
    share_metrics(d, f);
    counter_prometheus(d, f);
    if (fclose(f) != 0) {
        free(buf);
        return MHD_NO;
    }
    return reply_bytes(con, MHD_HTTP_OK, "text/plain; version=0.0.4; "
                       "charset=utf-8", buf, len, MHD_RESPMEM_MUST_FREE);
}

/* GET /api/timeline[?since=T]: a page that polls asks only for the frames
 * after the last one it has, so a large timeline is not rebuilt on slaqd's
 * loop every second for every browser. */
static enum MHD_Result serve_timeline(sd_daemon *d, struct MHD_Connection *con)
{
    const char *v = MHD_lookup_connection_value(con, MHD_GET_ARGUMENT_KIND,
                                                "since");
    double since = 0;
    if (v) {
        char *end;
        since = strtod(v, &end);
        if (end == v || *end || !isfinite(since))
            return reply(con, MHD_HTTP_BAD_REQUEST,
                         api_error("bad_request", "since=%.40s: expected a "
                                   "time in seconds", v));
    }
    return reply(con, MHD_HTTP_OK, trace_timeline_json(d, since));
}

/* GET /api/initial.js: the status, the jobs and the whole timeline as a
 * script that sets window.slaqInitial. The page loads it like any script,
 * before its load event, so the first paint (and a headless browser's
 * screenshot) already shows the charts rather than "connecting…". */
static enum MHD_Result serve_initial(sd_daemon *d, struct MHD_Connection *con)
{
    json_t *st = json_pack("{s:s}", "type", "status");
    json_t *ls = json_pack("{s:s}", "type", "ls");
    json_t *all = json_pack("{s:o, s:o, s:o}", "status", api_handle(d, st),
                            "jobs", api_handle(d, ls), "timeline",
                            trace_timeline_json(d, 0));
    json_decref(st);
    json_decref(ls);
    char *s = all ? json_dumps(all, JSON_COMPACT) : NULL;
    json_decref(all);
    char *js = NULL;
    int n = s ? asprintf(&js, "window.slaqInitial = %s;\n", s) : -1;
    free(s);
    if (n < 0)
        return MHD_NO;
    return reply_bytes(con, MHD_HTTP_OK, "text/javascript; charset=utf-8",
                       js, (size_t)n, MHD_RESPMEM_MUST_FREE);
}

/* A compiled-in dashboard file, or NULL. */
static const sd_asset *asset_find(const char *url)
{
    if (!strcmp(url, "/"))
        url = "/index.html";
    for (size_t i = 0; i < sd_nassets; i++)
        if (!strcmp(sd_assets[i].path, url))
            return &sd_assets[i];
    return NULL;
}

/*
 * Is the request's Host one that names this server? A web page on another
 * site that rebinds its DNS name to 127.0.0.1 reaches the port with its
 * own name as Host: refusing it keeps the job table (every command line)
 * from that page. A request without Host (HTTP/1.0 tools) is let through.
 */
static int host_ok(sd_daemon *d, struct MHD_Connection *con)
{
    const char *host = MHD_lookup_connection_value(con, MHD_HEADER_KIND,
                                                   MHD_HTTP_HEADER_HOST);
    if (!host)
        return 1;
    for (char **h = d->http_host_ok; h && *h; h++)
        if (!strcasecmp(host, *h))
            return 1;
    return 0;
}

/* GET /api/jobs/ID/history?after=ITER&limit=N: a page of the job's
 * reports in iteration order, O(N) whatever the history's length. */
static enum MHD_Result serve_history(sd_daemon *d, struct MHD_Connection *con,
                                     sd_job *j)
{
    static const char *const names[] = {"after", "limit"};
    long long v[2] = {-1, 1000};
    for (int i = 0; i < 2; i++) {
        const char *s = MHD_lookup_connection_value(con, MHD_GET_ARGUMENT_KIND,
                                                    names[i]);
        char *end;
        if (!s)
            continue;
        v[i] = strtoll(s, &end, 10);
        if (end == s || *end || v[i] < (i ? 1 : -1))
            return reply(con, MHD_HTTP_BAD_REQUEST, api_error(
                "bad_request", "%s=%.40s: expected %s", names[i], s,
                i ? "a count >= 1" : "an iteration (-1: from the start)"));
    }
    if (v[1] > SD_HISTORY_PAGE)
        v[1] = SD_HISTORY_PAGE;
    int64_t next;
    json_t *rows = store_reports_page(d->store, j->id, v[0], (size_t)v[1],
                                      &next);
    return reply(con, MHD_HTTP_OK, json_pack(
        "{s:b, s:I, s:o, s:o}", "ok", 1, "job", (json_int_t)j->id, "rows",
        rows, "next", next >= 0 ? json_integer(next) : json_null()));
}

/* GET /api/jobs/ID/forecast and /history; 404 for an unknown job or
 * sub-path. */
static enum MHD_Result serve_forecast(sd_daemon *d, struct MHD_Connection *con,
                                      const char *url)
{
    char *end;
    long long id = strtoll(url + 10, &end, 10);
    int fc = end != url + 10 && !strcmp(end, "/forecast");
    int hist = end != url + 10 && !strcmp(end, "/history");
    int est = end != url + 10 && !strcmp(end, "/estimates");
    sd_job *j = (fc || hist || est) && id > 0 ? job_get(d, id) : NULL;
    if (!j)
        return reply(con, MHD_HTTP_NOT_FOUND,
                     api_error("unknown_job", "no job with id %.40s",
                               url + 10));
    if (hist)
        return serve_history(d, con, j);
    if (est) {
        aqpd_load(d, j);
        return reply(con, MHD_HTTP_OK, aqpd_estimates_json(j));
    }
    return reply(con, MHD_HTTP_OK, trace_forecast_json(d, j));
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
    http_conn *hc = conn_of(con);
    if (hc)
        hc->headers_done = 1;
    if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
        *upload_size = 0;
        return reply(con, MHD_HTTP_METHOD_NOT_ALLOWED,
                     api_error("read_only", "the HTTP API only reads; use the "
                               "slaq command (the Unix socket) to change "
                               "anything"));
    }
    if (!host_ok(d, con)) {
        d->http_host_refused++;
        *upload_size = 0;
        return reply(con, 421, api_error("misdirected", "this is slaqd; "
                     "Host %.100s is not one of its names (see slaqd "
                     "--http-allow-host)", MHD_lookup_connection_value(
                         con, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST)));
    }
    const sd_asset *a = asset_find(url);
    if (a)
        return reply_bytes(con, MHD_HTTP_OK, a->type, (void *)a->data,
                           a->len, MHD_RESPMEM_PERSISTENT);
    if (!strcmp(url, "/chart.js"))
        return serve_chartjs(d, con);
    if (!strcmp(url, "/metrics"))
        return serve_metrics(d, con);
    if (!strcmp(url, "/api/timeline"))
        return serve_timeline(d, con);
    if (!strcmp(url, "/api/initial.js"))
        return serve_initial(d, con);
    if (!strncmp(url, "/api/jobs/", 10) && strchr(url + 10, '/'))
        return serve_forecast(d, con, url);
    if (!strcmp(url, "/api/sweeps"))
        return reply(con, MHD_HTTP_OK, sweep_http_list(d));
    if (!strncmp(url, "/api/sweeps/", 12)) {
        char *end;
        long long id = strtoll(url + 12, &end, 10);
        json_t *w = end != url + 12 && !*end ? sweep_http_one(d, id) : NULL;
        return w ? reply(con, MHD_HTTP_OK, w)
                 : reply(con, MHD_HTTP_NOT_FOUND, api_error("unknown_sweep",
                         "no sweep %.40s", url + 12));
    }
    json_t *req = NULL;
    if (!strcmp(url, "/api/status"))
        req = json_pack("{s:s}", "type", "status");
    else if (!strcmp(url, "/api/jobs")) {
        req = json_pack("{s:s}", "type", "ls");
        static const char *const args[] = {"after", "limit"};
        for (int i = 0; i < 2; i++) {
            const char *v = MHD_lookup_connection_value(
                con, MHD_GET_ARGUMENT_KIND, args[i]);
            if (v)
                json_object_set_new(req, args[i], json_string(v));
        }
    }
    else if (!strcmp(url, "/api/policy"))
        req = json_pack("{s:s}", "type", "policy");
    else if (!strcmp(url, "/api/shares"))
        req = json_pack("{s:s}", "type", "share");
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
        /* Slow clients (slowloris) hold at most SD_HTTP_PER_IP of the
         * connections each and lose them after SD_HTTP_TIMEOUT_S idle; a
         * request's headers are held to MHD's per-connection memory. */
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)SD_HTTP_TIMEOUT_S,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)SD_HTTP_MAX_CONNS,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)SD_HTTP_PER_IP,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)16384,
        /* ... and must send whole headers within SD_HTTP_HEADER_S. */
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, (void *)d,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, (void *)d,
        MHD_OPTION_END);
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
    /* The names a browser uses for this server, and the operator's. */
    size_t n = 4 + d->cfg.n_http_hosts, k = 0;
    d->http_host_ok = calloc(n + 1, sizeof *d->http_host_ok);
    if (!d->http_host_ok) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    const char *local[] = {"127.0.0.1", "localhost", "[::1]", host};
    for (size_t i = 0; i < 4; i++)
        if (asprintf(&d->http_host_ok[k], "%s:%u", local[i],
                     d->http_port) >= 0)
            k++;
    for (size_t i = 0; i < d->cfg.n_http_hosts; i++)
        d->http_host_ok[k++] = strdup(d->cfg.http_hosts[i]);
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
    if (!d->http)
        return;
    header_sweep(d);
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
    for (char **h = d->http_host_ok; h && *h; h++)
        free(*h);
    free(d->http_host_ok);
    d->http_host_ok = NULL;
}
