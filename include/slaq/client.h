/*
 * client.h — libslaq-client, what a training job links to talk to slaqd.
 *
 * A job reports one line per finished iteration (loss, CPU-seconds,
 * samples) and learns how many cores it has and whether it should stop.
 * The library never blocks the training loop: the socket is non-blocking,
 * reports are buffered and written when the socket takes them, and
 * messages from slaqd are read opportunistically inside the calls below.
 * Without a slaqd (none running, or it restarts) every call still works:
 * reports are dropped, slaq_client_cores() returns the default allocation,
 * and the client reconnects by itself at most once a second.
 *
 * Typical use:
 *
 *     slaq_client *c = slaq_client_open();      // from the environment
 *     for (uint64_t k = 1; !slaq_client_should_stop(c); k++) {
 *         set_threads(slaq_client_threads(c));
 *         double loss = train_one_iteration();
 *         slaq_client_report(c, k, loss, cpu_seconds_used, samples);
 *     }
 *     slaq_client_close(c);
 *
 * One slaq_client is used from one thread (the training loop's). The wire
 * protocol is documented in docs/protocol.md; this API in docs/client.md.
 * Link with -lslaq-client (and jansson, which it uses to read replies).
 */
#ifndef SLAQ_CLIENT_H
#define SLAQ_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct slaq_client slaq_client;

/*
 * Connects as the environment says: SLAQ_SOCKET (the socket path; slaqd
 * sets it for jobs it starts; "tcp:HOST:PORT" for a slaqd started with
 * --tcp, the job token then comes from SLAQ_TOKEN, sent in clear: slaqd
 * takes the control token only in a sealed session) and SLAQ_JOB_ID (the
 * job this process is).
 * Without SLAQ_JOB_ID the process attaches itself as a new job named by
 * SLAQ_JOB_NAME (default: the program's name). Without SLAQ_SOCKET the
 * client stays offline. The default allocation is SLAQ_DEFAULT_CORES, else
 * the number of online CPUs.
 *
 * Returns NULL only when out of memory; an unreachable slaqd is not an
 * error (see slaq_client_connected()).
 */
slaq_client *slaq_client_open(void);

/*
 * Like slaq_client_open() but explicit: `socket_path` (NULL: offline;
 * "tcp:HOST:PORT": TCP, a host name being resolved here, once), `job_id`
 * (0: attach as a new job called `name`, which may be NULL).
 */
slaq_client *slaq_client_connect(const char *socket_path, int64_t job_id,
                                 const char *name);

/*
 * Reports the state after iteration `iter` (strictly increasing; iteration
 * 0 is the loss before training): the loss, the CPU-seconds used (all
 * threads) and samples processed since the previous report. The report
 * also carries the wall time since the previous report and the threads
 * the job ran (slaq_client_threads, slaq_client_set_threads). Returns 0 when
 * the report was queued, 1 when it was dropped because slaqd is not
 * connected (and the last slaqd did not acknowledge reports) or 65,536
 * reports already wait for it, -1 (errno EINVAL) when loss is not finite
 * or cpu_s or samples are negative or not finite. Never blocks.
 *
 * A queued report is kept until slaqd confirms it is in its database; if
 * the connection breaks first (slaqd killed and restarted, say), it is
 * sent again after the reconnection, as are reports made meanwhile. So
 * with a slaqd that acknowledges, a queued report is lost only if the
 * process ends before slaqd is back (slaq_client_close waits, within its
 * timeout, for the confirmations).
 */
int slaq_client_report(slaq_client *c, uint64_t iter, double loss,
                       double cpu_s, double samples);

/*
 * Like slaq_client_report(), for a job whose result is a vector (an
 * approximate query: one number per group and aggregate column): also
 * sends `n` current estimates and, when not NULL, their lower and upper
 * bounds (arrays of n). A non-finite value is sent as null ("not known
 * yet"). slaqd measures a query's progress from the change of
 * `estimates` between reports; `loss` is still required and is what a
 * slaqd that does not know vectors uses. n at most SLAQ_CLIENT_MAX_VECTOR
 * (else -1, errno EINVAL). Never blocks. Kept and sent again after a
 * reconnection with its vectors, as slaq_client_report()'s reports are;
 * besides the count, the vectors waiting for confirmation are bounded
 * (64 MiB of their text): past that a report is dropped (returns 1).
 */
#define SLAQ_CLIENT_MAX_VECTOR 512
int slaq_client_report_vector(slaq_client *c, uint64_t iter, double loss,
                              double cpu_s, double samples, size_t n,
                              const double *estimates, const double *lower,
                              const double *upper);

/*
 * Like slaq_client_report(), with the job's quality metric after `iter`
 * as well (validation accuracy, RMSE, perplexity... as named with
 * slaq_client_set_metric_name()): what a hyperparameter sweep follows.
 * `metric` NaN means "not measured at this iteration" (the report then
 * carries no metric). -1 (EINVAL) also for an infinite metric.
 */
int slaq_client_report_metric(slaq_client *c, uint64_t iter, double loss,
                              double metric, double cpu_s, double samples);

/* Names the metric the reports carry ("accuracy", "rmse", ...): 1 to
 * SLAQ_METRIC_NAME_MAX bytes, no control characters; sent in the hello,
 * or at once when connected. 0, or -1 (EINVAL) for a bad name. */
#define SLAQ_METRIC_NAME_MAX 64
int slaq_client_set_metric_name(slaq_client *c, const char *name);

/* The job's current allocation in cores (fractional), or the default
 * allocation until slaqd has said otherwise. Never blocks. */
double slaq_client_cores(slaq_client *c);

/*
 * The number of worker threads the job should run for its current
 * allocation: slaqd's advice, the count with the best measured speed on
 * the job's share (docs/client.md, "Threads"), never more than
 * slaq_client_threads_for(slaq_client_cores(c), online CPUs), slaq's
 * thread rule, which is all it is before slaqd has advised. Size thread
 * pools with it rather than with the cores directly, at the start of
 * every iteration: the job's reports then tell slaqd that the
 * iterations ran this many threads (and their wall time), which is what
 * its advice is measured from. Never blocks.
 */
int slaq_client_threads(slaq_client *c);

/* For a job that sizes its thread pools itself: the threads its next
 * reports' iterations run (>= 1; else ignored). Reports without either
 * call say nothing of threads, and slaqd learns nothing of the job's
 * scaling. */
void slaq_client_set_threads(slaq_client *c, int threads);

/* The thread rule itself, a pure function: max(1, floor(cores + 0.25)),
 * at most `cpus` (taken as 1 when below 1). 0.1 to 1.74 cores give 1
 * thread, 1.75 give 2. slaqd holds a job to its share with CPU weights or
 * a quota on the whole process, so threads beyond the share only contend
 * for it; a share a quarter of a core short of a whole one still keeps a
 * thread busy. A NaN or negative `cores` gives 1. */
int slaq_client_threads_for(double cores, long cpus);

/* Sets the allocation slaq_client_cores() returns until slaqd has given
 * one (e.g. a --threads option); cores > 0 and finite, else ignored. The
 * default default is SLAQ_DEFAULT_CORES, else the number of online CPUs. */
void slaq_client_set_default_cores(slaq_client *c, double cores);

/* Tells slaqd how many iterations the job will run (its epochs, say):
 * the end of its loss curve, against which its loss reduction, its time
 * to 90% and --target-reduction stops are measured. Without it slaqd
 * uses the forecast's asymptote. Ignored when 0. */
void slaq_client_set_iters(slaq_client *c, uint64_t iters);

/* Tells slaqd the algorithm's convergence class, as `slaq submit
 * --convergence` does: "sublinear" (SGD, gradient descent, K-Means),
 * "linear" or "superlinear" (L-BFGS, Newton), "nonconvex" or "unknown".
 * slaq-fit then fits only that class's curve family. Sent in hello (or at
 * once, when connected). Returns 0, or -1 for any other name (ignored). */
int slaq_client_set_convergence(slaq_client *c, const char *cls);

/* Non-zero once slaqd has asked the job to stop (target loss reduction
 * reached, iteration or time limit, or a user's cancel). The job should
 * finish its iteration, save what it needs and exit. Never blocks. */
int slaq_client_should_stop(slaq_client *c);

/* Why the job was asked to stop ("target_reduction", "max_iters",
 * "max_time", "cancelled", ...), or NULL. Owned by the client. */
const char *slaq_client_stop_reason(const slaq_client *c);

/* Non-zero while connected to slaqd (after it accepted the hello). */
int slaq_client_connected(const slaq_client *c);

/* The job id (from the environment, or assigned by slaqd to an attached
 * process), or 0 if not known yet. */
int64_t slaq_client_job_id(const slaq_client *c);

/* Reports dropped so far: slaqd was not reachable (and not known to
 * acknowledge), or 65,536 reports were already waiting for it. */
uint64_t slaq_client_dropped(const slaq_client *c);

/* Reports kept until slaqd confirms that they are in its database (a
 * slaqd that acknowledges reports, docs/protocol.md), plus any not yet
 * written to the socket. They are sent again after a reconnection. */
size_t slaq_client_unacked(const slaq_client *c);

/* The last iteration slaqd confirmed as committed (with every one before
 * it), or -1 if none yet. */
int64_t slaq_client_acked(const slaq_client *c);

/* Reads slaqd's messages and writes queued reports now (still without
 * blocking); the calls above do this themselves. */
void slaq_client_poll(slaq_client *c);

/* Waits at most `timeout_ms` for every queued report to be confirmed
 * (reconnecting if need be; to be written, with a slaqd that does not
 * confirm), says goodbye and frees the client. NULL is ignored. */
void slaq_client_close_timeout(slaq_client *c, int timeout_ms);
/* slaq_client_close_timeout(c, 1000). */
void slaq_client_close(slaq_client *c);

#ifdef __cplusplus
}
#endif
#endif /* SLAQ_CLIENT_H */
