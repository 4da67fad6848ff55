#include "daemon/daemon.h"
json_t *api_sweep(sd_daemon *d, const char *type, json_t *req)
{
    (void)d; (void)req;
    return json_pack("{s:s,s:b,s:s,s:s}", "type", "result", "ok", 0, "code", "unknown_type", "message", type);
}
