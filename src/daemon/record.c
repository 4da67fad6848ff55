/*
 * record.c — the names of a job's states, and a job's record by its id
 * (record.h).
 */
#include <string.h>

#include "daemon/daemon.h"
#include "daemon/record.h"

const char *const job_state_names[SD_NSTATES] = {
    [SD_RUNNING] = "running", [SD_STOPPING] = "stopping", [SD_DONE] = "done",
    [SD_FAILED] = "failed", [SD_STOPPED] = "stopped",
    [SD_CANCELLED] = "cancelled", [SD_LOST] = "lost", [SD_PENDING] = "pending",
};
_Static_assert(SD_PENDING + 1 == SD_NSTATES, "a name for every state");

const char *job_state_name(sd_state s)
{
    return (unsigned)s < SD_NSTATES
               ? job_state_names[s] : "?";
}

int job_state_parse(const char *name, sd_state *out)
{
    for (unsigned i = 0; i < SD_NSTATES; i++)
        if (!strcmp(name, job_state_names[i])) {
            *out = (sd_state)i;
            return 0;
        }
    return -1;
}

sd_job *job_get(sd_daemon *d, int64_t id)
{
    if (id < 1 || (uint64_t)id > d->njobs)
        return NULL;
    return d->jobs[id - 1];
}
