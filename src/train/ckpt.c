/*
 * ckpt.c — checkpoints of a slaq-train run: save its state, exit, and
 * continue later (on this machine or another) from the same iteration.
 *
 * A checkpoint holds the driver's progress (the iterations done, every
 * loss, CPU time and metric so far, the totals) and the algorithm's own
 * arrays (its `state` hook: parameters, gradient, momentum...), so a
 * resumed run reports iteration k+1 next, with the loss it would have had.
 * (L-BFGS jobs — linreg, mlpc — restart L-BFGS at the saved point: its
 * curvature pairs are rebuilt over the next few iterations.)
 *
 * Format (little-endian, native doubles; see docs/train.md):
 *   "SLAQCKP1"            8 bytes
 *   header                char algo[16], char dataset[64], u64 rows,
 *                         u64 cols, u64 state_doubles, i32 iters,
 *                         i32 reserved
 *   progress              double loss[iters+1], iter_cpu[iters],
 *                         metric[iters+1], cpu_total, wall_total,
 *                         samples_total, best_drop
 *   state                 state_doubles doubles, in the hook's order
 *   "SLAQEND1"            8 bytes: a file cut short is refused
 * The file is written to PATH.tmp.PID and renamed over PATH, so a crash
 * while writing leaves the previous checkpoint intact. The temporary name is
 * this process's own: two runs of a job (an earlier one that did not know
 * it was replaced, on a node that came back) never write into one file.
 * A cluster controller fences such a run by renaming the directory away
 * (docs/cluster-runtime.md): its rename then fails, and it writes nothing
 * the new run reads.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "train/train.h"

static const char ckpt_magic[8] = {'S', 'L', 'A', 'Q', 'C', 'K', 'P', '1'};
static const char ckpt_end[8] = {'S', 'L', 'A', 'Q', 'E', 'N', 'D', '1'};

struct ckpt_header {
    char algo[16];
    char dataset[64];
    uint64_t rows, cols, state_doubles;
    int32_t iters, reserved;
};

/* The state hook's callbacks: count, write, or read the arrays. */
struct ckpt_io {
    FILE *f;
    size_t total;   /* doubles seen */
    int failed;
};

static void io_count(void *arg, double *v, size_t n)
{
    (void)v;
    ((struct ckpt_io *)arg)->total += n;
}

static void io_write(void *arg, double *v, size_t n)
{
    struct ckpt_io *io = arg;
    if (!io->failed && fwrite(v, sizeof *v, n, io->f) != n)
        io->failed = 1;
    io->total += n;
}

static void io_read(void *arg, double *v, size_t n)
{
    struct ckpt_io *io = arg;
    if (!io->failed && fread(v, sizeof *v, n, io->f) != n)
        io->failed = 1;
    io->total += n;
}

/* The shape a checkpoint must match to be resumed by this job. */
static void ckpt_shape(struct train_job *job, struct ckpt_header *h)
{
    memset(h, 0, sizeof *h);
    snprintf(h->algo, sizeof h->algo, "%s", job->algo->name);
    snprintf(h->dataset, sizeof h->dataset, "%s", job->dataset);
    if (job->algo->kind == TRAIN_TEXT) {
        h->rows = job->corpus.n_docs;
        h->cols = job->corpus.n_vocab;
    } else {
        h->rows = job->train.n;
        h->cols = job->train.d;
    }
    struct ckpt_io io = {0};
    job->algo->state(job, io_count, &io);
    h->state_doubles = io.total;
    h->iters = job->iters;
}

int train_ckpt_save(struct train_job *job, char *err, size_t errlen)
{
    double t0 = train_wall_seconds();
    char tmp[4200];
    struct ckpt_header h;
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", job->ckpt_path, (long)getpid());
    unlink(tmp); /* left by an earlier process with this pid */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        snprintf(err, errlen, "checkpoint %s: cannot create: %s", tmp,
                 strerror(errno));
        return -1;
    }
    ckpt_shape(job, &h);
    struct ckpt_io io = {.f = f};
    size_t n = (size_t)job->iters;
    double tot[4] = {job->cpu_total, job->wall_total, job->samples_total,
                     job->best_drop};
    if (fwrite(ckpt_magic, 1, 8, f) != 8 || fwrite(&h, sizeof h, 1, f) != 1 ||
        fwrite(job->loss, sizeof(double), n + 1, f) != n + 1 ||
        fwrite(job->iter_cpu, sizeof(double), n, f) != n ||
        fwrite(job->epoch_metric, sizeof(double), n + 1, f) != n + 1 ||
        fwrite(tot, sizeof(double), 4, f) != 4)
        io.failed = 1;
    if (!io.failed)
        job->algo->state(job, io_write, &io);
    if (!io.failed && fwrite(ckpt_end, 1, 8, f) != 8)
        io.failed = 1;
    long size = io.failed ? -1 : ftell(f);
    if (fclose(f) != 0)
        io.failed = 1;
    if (io.failed || rename(tmp, job->ckpt_path) < 0) {
        snprintf(err, errlen, "checkpoint %s: cannot write: %s",
                 job->ckpt_path, strerror(errno ? errno : EIO));
        remove(tmp);
        return -1;
    }
    job->ckpt_bytes = size;
    job->ckpt_count++;
    job->ckpt_ms_last = (train_wall_seconds() - t0) * 1e3;
    job->ckpt_ms_total += job->ckpt_ms_last;
    return 0;
}

int train_ckpt_load(struct train_job *job, const char *path, char *err,
                    size_t errlen)
{
    FILE *f = fopen(path, "rb");
    char magic[8];
    struct ckpt_header h, want;
    if (!f) {
        snprintf(err, errlen, "--resume %s: cannot open: %s", path,
                 strerror(errno));
        return -1;
    }
    int rc = -1;
    if (fread(magic, 1, 8, f) != 8 || memcmp(magic, ckpt_magic, 8) ||
        fread(&h, sizeof h, 1, f) != 1) {
        snprintf(err, errlen, "--resume %s: not a slaq-train checkpoint "
                 "(expected the header \"SLAQCKP1\")", path);
        goto out;
    }
    h.algo[sizeof h.algo - 1] = h.dataset[sizeof h.dataset - 1] = 0;
    ckpt_shape(job, &want);
    if (strcmp(h.algo, want.algo)) {
        snprintf(err, errlen, "--resume %s: the checkpoint is of algorithm "
                 "%s, this run is %s", path, h.algo, want.algo);
        goto out;
    }
    if (strcmp(h.dataset, want.dataset) || h.rows != want.rows ||
        h.cols != want.cols) {
        snprintf(err, errlen, "--resume %s: the checkpoint was trained on "
                 "%s with %llu rows of %llu features, this run has %s with "
                 "%llu rows of %llu (the same data options are needed)", path,
                 h.dataset, (unsigned long long)h.rows,
                 (unsigned long long)h.cols, want.dataset,
                 (unsigned long long)want.rows, (unsigned long long)want.cols);
        goto out;
    }
    if (h.state_doubles != want.state_doubles) {
        snprintf(err, errlen, "--resume %s: the checkpoint's model has %llu "
                 "state values, this run's %llu (the same model options, "
                 "e.g. --hidden, --k, are needed)", path,
                 (unsigned long long)h.state_doubles,
                 (unsigned long long)want.state_doubles);
        goto out;
    }
    if (h.iters < 0 || h.iters > 100000000) {
        snprintf(err, errlen, "--resume %s: bad iteration count %d", path,
                 (int)h.iters);
        goto out;
    }
    if (train_job_reserve(job, (size_t)h.iters + 2) < 0) {
        snprintf(err, errlen, "--resume %s: out of memory for the history "
                 "of %d iterations", path, (int)h.iters);
        goto out;
    }
    size_t n = (size_t)h.iters;
    double tot[4];
    struct ckpt_io io = {.f = f};
    if (fread(job->loss, sizeof(double), n + 1, f) != n + 1 ||
        fread(job->iter_cpu, sizeof(double), n, f) != n ||
        fread(job->epoch_metric, sizeof(double), n + 1, f) != n + 1 ||
        fread(tot, sizeof(double), 4, f) != 4)
        io.failed = 1;
    if (!io.failed)
        job->algo->state(job, io_read, &io);
    if (io.failed || fread(magic, 1, 8, f) != 8 ||
        memcmp(magic, ckpt_end, 8)) {
        snprintf(err, errlen, "--resume %s: the file is cut short or "
                 "damaged (no end marker after %llu state values)", path,
                 (unsigned long long)h.state_doubles);
        goto out;
    }
    job->iters = h.iters;
    job->cpu_total = tot[0];
    job->wall_total = tot[1];
    job->samples_total = tot[2];
    job->best_drop = tot[3];
    job->resumed_from = h.iters;
    rc = 0;
out:
    fclose(f);
    return rc;
}
