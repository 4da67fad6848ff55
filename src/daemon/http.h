/*
 * http.h — the HTTP API and the dashboard (http.c, libmicrohttpd), and
 * the dashboard's files embedded at build time.
 */
#ifndef SLAQ_DAEMON_HTTP_H
#define SLAQ_DAEMON_HTTP_H

#include <stddef.h>

typedef struct sd_daemon sd_daemon;

#define SD_HTTP_PER_IP 32             /* HTTP connections per address */
#define SD_HTTP_MAX_CONNS 512         /* HTTP connections in all */
#define SD_HTTP_TIMEOUT_S 10          /* HTTP idle (and header) timeout */
#define SD_HTTP_HEADER_S 10.0         /* a request's headers, in all */

/* The dashboard's files, embedded at build time (web/, scripts/embed-web.sh). */
typedef struct sd_asset {
    const char *path;     /* URL path, e.g. "/app.js" */
    const char *type;     /* Content-Type */
    const unsigned char *data;
    size_t len;
} sd_asset;
extern const sd_asset sd_assets[];
extern const size_t sd_nassets;

int http_start(sd_daemon *d, const char *addr, char *err, size_t errlen);
void http_run(sd_daemon *d);
void http_stop(sd_daemon *d);

#endif
