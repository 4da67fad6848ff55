/*
 * report.c — gnuplot figures and report.html for `slaq sim`.
 *
 * The plots are drawn from the CSV files already in the output directory,
 * and the gnuplot script is kept there (plots.gp), so a user can restyle a
 * figure by editing it and running gnuplot again. Everything written is a
 * function of the simulation's results, so two identical runs produce the
 * same files (up to the wall-clock sched_ms numbers).
 */
#include "sim/report.h"
#include "core/util.h"
#include "io/stats.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static FILE *open_in(const char *dir, const char *file, char *err,
                     size_t errlen)
{
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = n < (int)sizeof path ? fopen(path, "w") : NULL;
    if (!f)
        util_errf(err, errlen, "%s: %s", path, strerror(errno));
    return f;
}

static int close_checked(FILE *f, const char *file, int rc, char *err,
                         size_t errlen)
{
    if (fclose(f) != 0 || rc) {
        util_errf(err, errlen, "%s: write error", file);
        return -1;
    }
    return 0;
}

/* Mean time to each loss reduction, one column per run (Fig. 7b). */
static int write_reduction(const report_input *in, char *err, size_t errlen)
{
    FILE *f = open_in(in->dir, "reduction.csv", err, errlen);
    if (!f)
        return -1;
    int rc = fputs("reduction_pct", f) < 0;
    for (size_t r = 0; r < in->nruns; r++)
        rc |= fprintf(f, ",%s_mean_s", in->runs[r].name) < 0;
    rc |= fputc('\n', f) == EOF;
    for (int x = 0; x < SIM_NX; x++) {
        rc |= fprintf(f, "%d", sim_x_pct[x]) < 0;
        for (size_t r = 0; r < in->nruns; r++)
            rc |= fprintf(f, ",%.3f", in->runs[r].sum->tx_mean[x]) < 0;
        rc |= fputc('\n', f) == EOF;
    }
    return close_checked(f, "reduction.csv", rc, err, errlen);
}

/* ------------------------------------------------- figure data files */

/*
 * Reads the first ncols numeric columns of every row of DIR/SUB/FILE after
 * its header into a malloc'd row-major array. Returns the row count, or
 * (size_t)-1 with a message in err.
 */
static size_t read_csv(const char *dir, const char *sub, const char *file,
                       size_t ncols, double **out, char *err, size_t errlen)
{
    char path[4096], line[1024];
    snprintf(path, sizeof path, "%s/%s/%s", dir, sub, file);
    FILE *f = fopen(path, "r");
    *out = NULL;
    if (!f) {
        util_errf(err, errlen, "%s: %s", path, strerror(errno));
        return (size_t)-1;
    }
    size_t n = 0, cap = 0, lineno = 1;
    double *v = NULL;
    int bad = !fgets(line, sizeof line, f);   /* the header */
    while (!bad && fgets(line, sizeof line, f)) {
        lineno++;
        if (n == cap) {
            cap = grow_cap(cap, n + 1, 256);
            if (!cap || grow_array(&v, cap, ncols * sizeof *v)) {
                bad = 1;
                break;
            }
        }
        char *p = line, *end;
        for (size_t c = 0; c < ncols && !bad; c++) {
            v[n * ncols + c] = strtod(p, &end);
            bad = end == p || (*end != ',' && c + 1 < ncols);
            p = end + 1;
        }
        n++;
    }
    fclose(f);
    if (bad) {
        free(v);
        util_errf(err, errlen, "%s:%zu: expected %zu numbers", path, lineno,
                  ncols);
        return (size_t)-1;
    }
    *out = v;
    return n;
}

/* Fig. 8 bins at most this many points across a run. */
enum { FIG8_BINS = 120 };

/*
 * RUN/fig8.csv: the timeline's cores by loss group, averaged over bins of
 * k consecutive epochs (k chosen so there are at most FIG8_BINS bins) and
 * stacked: high, high + medium, all three. Drawn as filled areas, one
 * band per group; the top edge is the cores in use.
 */
static int write_fig8(const char *dir, const char *run, char *err,
                      size_t errlen)
{
    double *t;   /* time, active, loss, high, medium, low */
    size_t n = read_csv(dir, run, "timeline.csv", 6, &t, err, errlen);
    if (n == (size_t)-1)
        return -1;
    char sub[4096];
    snprintf(sub, sizeof sub, "%s/%s", dir, run);
    FILE *f = open_in(sub, "fig8.csv", err, errlen);
    if (!f) {
        free(t);
        return -1;
    }
    size_t k = n > FIG8_BINS ? (n + FIG8_BINS - 1) / FIG8_BINS : 1;
    int rc = fputs("time_s,high,high_medium,all\n", f) < 0;
    for (size_t b = 0; b < n; b += k) {
        size_t m = n - b < k ? n - b : k;
        double g[4] = {0, 0, 0, 0};   /* time, high, medium, low */
        for (size_t i = b; i < b + m; i++) {
            g[0] += t[i * 6];
            for (int c = 1; c < 4; c++)
                g[c] += t[i * 6 + 2 + (size_t)c];
        }
        for (int c = 0; c < 4; c++)
            g[c] /= (double)m;
        rc |= fprintf(f, "%.3f,%.4f,%.4f,%.4f\n", g[0], g[1], g[1] + g[2],
                      g[1] + g[2] + g[3]) < 0;
    }
    free(t);
    return close_checked(f, "fig8.csv", rc, err, errlen);
}

/* Fig. 10c groups the job counts into about this many bins. */
enum { FIG10C_BINS = 50 };

/*
 * RUN/fig10c.csv: scheduling time against active jobs, per bin of the job
 * count: the median and the 90th percentile of the epochs' wall times and
 * how many epochs fell in the bin. A bin's mean would be ruled by the few
 * epochs that the machine delayed (a 4 ms epoch among 0.05 ms ones).
 */
static int write_fig10c(const char *dir, const char *run, char *err,
                        size_t errlen)
{
    double *s;   /* time, active jobs, ms */
    size_t n = read_csv(dir, run, "sched.csv", 3, &s, err, errlen);
    if (n == (size_t)-1)
        return -1;
    double maxj = 0;
    for (size_t i = 0; i < n; i++)
        maxj = s[i * 3 + 1] > maxj ? s[i * 3 + 1] : maxj;
    double bw = maxj > FIG10C_BINS ? ceil(maxj / FIG10C_BINS) : 1;
    size_t nb = (size_t)(maxj / bw) + 1;
    size_t *cnt = calloc(nb, sizeof *cnt), *at = calloc(nb + 1, sizeof *at);
    double *v = malloc((n ? n : 1) * sizeof *v);
    char sub[4096];
    snprintf(sub, sizeof sub, "%s/%s", dir, run);
    FILE *f = cnt && at && v ? open_in(sub, "fig10c.csv", err, errlen) : NULL;
    if (!f) {
        if (!(cnt && at && v))
            util_errf(err, errlen, "out of memory");
        free(cnt), free(at), free(v), free(s);
        return -1;
    }
    /* Counting sort of the times by bin, then order statistics per bin. */
    for (size_t i = 0; i < n; i++)
        cnt[(size_t)(s[i * 3 + 1] / bw)]++;
    for (size_t b = 0; b < nb; b++)
        at[b + 1] = at[b] + cnt[b];
    memset(cnt, 0, nb * sizeof *cnt);
    for (size_t i = 0; i < n; i++) {
        size_t b = (size_t)(s[i * 3 + 1] / bw);
        v[at[b] + cnt[b]++] = s[i * 3 + 2];
    }
    int rc = fputs("active_jobs,median_ms,p90_ms,epochs\n", f) < 0;
    for (size_t b = 0; b < nb; b++) {
        if (!cnt[b])
            continue;
        double *x = v + at[b];
        double p90 = stats_quantile(x, cnt[b], 0.9);   /* sorts x */
        rc |= fprintf(f, "%g,%.4f,%.4f,%zu\n", bw * (double)b,
                      stats_median_sorted(x, cnt[b]), p90, cnt[b]) < 0;
    }
    free(cnt), free(at), free(v), free(s);
    return close_checked(f, "fig10c.csv", rc, err, errlen);
}

static int write_fig_data(const report_input *in, char *err, size_t errlen)
{
    for (size_t r = 0; r < in->nruns; r++)
        if (write_fig8(in->dir, in->runs[r].name, err, errlen) ||
            write_fig10c(in->dir, in->runs[r].name, err, errlen))
            return -1;
    return 0;
}

/* Columns per run in sweep.csv, after interarrival_s. */
enum { SWEEP_COLS = 4 };

static int write_sweep(const report_input *in, char *err, size_t errlen)
{
    FILE *f = open_in(in->dir, "sweep.csv", err, errlen);
    if (!f)
        return -1;
    int rc = fputs("interarrival_s", f) < 0;
    for (size_t r = 0; r < in->nruns; r++) {
        const char *n = in->runs[r].name;
        rc |= fprintf(f, ",%s_t90_s,%s_t95_s,%s_avg_norm_loss,%s_jct_s", n,
                      n, n, n) < 0;
    }
    rc |= fputc('\n', f) == EOF;
    int i90 = sim_x_index(90), i95 = sim_x_index(95);
    for (size_t i = 0; i < in->nsweep; i++) {
        rc |= fprintf(f, "%g", in->sweep_ia[i]) < 0;
        for (size_t r = 0; r < in->nruns; r++) {
            const sim_summary *s = &in->sweep[i * in->nruns + r];
            rc |= fprintf(f, ",%.3f,%.3f,%.6f,%.3f", s->tx_mean[i90],
                          s->tx_mean[i95], s->avg_norm_loss, s->jct_mean) < 0;
        }
        rc |= fputc('\n', f) == EOF;
    }
    return close_checked(f, "sweep.csv", rc, err, errlen);
}

static const char *SVG_TERM =
    "set terminal svg size 800,450 dynamic font 'sans,12'\n";

static int write_script(const report_input *in, char *err, size_t errlen)
{
    FILE *f = open_in(in->dir, "plots.gp", err, errlen);
    if (!f)
        return -1;
    int rc = 0;
    rc |= fprintf(f, "# Figures of a slaq sim run; render with: gnuplot "
                  "plots.gp\n%sset datafile separator ','\nset grid\n"
                  "set key outside right top\n", SVG_TERM) < 0;
    rc |= fputs("\nset output 'fig7a-loss.svg'\nset title 'Average "
                "normalised loss of active jobs (Fig. 7a)'\nset xlabel "
                "'time (s)'\nset ylabel 'normalised loss'\nset yrange "
                "[0:1.05]\nplot ", f) < 0;
    for (size_t r = 0; r < in->nruns; r++)
        rc |= fprintf(f, "%s'%s/timeline.csv' skip 1 using 1:3 with lines "
                      "title '%s'", r ? ", \\\n     " : "",
                      in->runs[r].name, in->runs[r].name) < 0;
    rc |= fputs("\nset autoscale y\n\nset output 'fig7b-reduction.svg'\n"
                "set title 'Mean time to reach X% loss reduction (Fig. 7b)'"
                "\nset xlabel 'loss reduction (%)'\nset ylabel 'time since "
                "arrival (s)'\nset yrange [0:*]\nplot ", f) < 0;
    for (size_t r = 0; r < in->nruns; r++)
        rc |= fprintf(f, "%s'reduction.csv' skip 1 using 1:%zu with "
                      "linespoints title '%s'", r ? ", \\\n     " : "",
                      r + 2, in->runs[r].name) < 0;
    rc |= fputs("\nset autoscale y\n", f) < 0;
    /* Fig. 8: stacked areas, drawn from the back (all groups) to the
     * front (high loss), each opaque over the one before. */
    for (size_t r = 0; r < in->nruns; r++) {
        const char *n = in->runs[r].name;
        rc |= fprintf(f, "\nset output 'fig8-cores-%s.svg'\nset title "
                      "'Cores by loss group, %s (Fig. 8, stacked)'\n"
                      "set xlabel 'time (s)'\n"
                      "set ylabel 'cores'\nset yrange [0:*]\n"
                      "set style fill solid 0.85 noborder\n"
                      "plot '%s/fig8.csv' skip 1 using 1:4 with "
                      "filledcurves x1 linecolor rgb '#9ecae1' title 'low "
                      "(bottom 50%%)', \\\n     '' skip 1 using 1:3 with "
                      "filledcurves x1 linecolor rgb '#fdae6b' title "
                      "'medium (next 25%%)', \\\n     '' skip 1 using 1:2 "
                      "with filledcurves x1 linecolor rgb '#de2d26' title "
                      "'high loss (top 25%%)'\nset style fill empty\n"
                      "set autoscale y\n", n, n, n) < 0;
    }
    /* Fig. 10c: scheduling time against the number of jobs, the median of
     * the epochs in each of about 50 bins of the job count (fig10c.csv);
     * a log scale, so a 2 ms policy and a 0.05 ms one both show. */
    rc |= fputs("\nset output 'fig10c-sched.svg'\nset title 'Scheduling "
                "time per epoch against active jobs (Fig. 10c; median per "
                "bin)'\nset xlabel 'active jobs'\nset ylabel "
                "'slaq\\_sched\\_epoch wall time (ms)'\nset logscale y\n"
                "plot ", f) < 0;
    for (size_t r = 0; r < in->nruns; r++)
        rc |= fprintf(f, "%s'%s/fig10c.csv' skip 1 using 1:($2 > 0 ? $2 : "
                      "1e-4) with linespoints title '%s'",
                      r ? ", \\\n     " : "", in->runs[r].name,
                      in->runs[r].name) < 0;
    rc |= fputs("\nunset logscale y\nset autoscale y\n", f) < 0;
    if (in->nsweep) {
        rc |= fputs("\nset output 'fig9-sweep.svg'\nset title 'Mean time "
                    "to 90% / 95% loss reduction against arrival rate "
                    "(Fig. 9)'\nset xlabel 'mean inter-arrival time (s)'\n"
                    "set ylabel 'time since arrival (s)'\nset yrange [0:*]"
                    "\nplot ", f) < 0;
        for (size_t r = 0; r < in->nruns; r++) {
            size_t c = 2 + SWEEP_COLS * r;
            rc |= fprintf(f, "%s'sweep.csv' skip 1 using 1:%zu with "
                          "linespoints linecolor %zu title '%s 90%%', "
                          "\\\n     'sweep.csv' skip 1 using 1:%zu with "
                          "linespoints linecolor %zu dashtype 2 title "
                          "'%s 95%%'", r ? ", \\\n     " : "", c, r + 1,
                          in->runs[r].name, c + 1, r + 1,
                          in->runs[r].name) < 0;
        }
        rc |= fputc('\n', f) == EOF;
    }
    return close_checked(f, "plots.gp", rc, err, errlen);
}

/* Runs gnuplot on plots.gp inside the output directory. */
static int run_gnuplot(const char *dir, char *err, size_t errlen)
{
    pid_t pid = fork();
    if (pid < 0) {
        util_errf(err, errlen, "cannot start gnuplot: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0)
            dup2(null, STDOUT_FILENO);
        if (chdir(dir) == 0)
            execlp("gnuplot", "gnuplot", "plots.gp", (char *)NULL);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            util_errf(err, errlen, "gnuplot: %s", strerror(errno));
            return -1;
        }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
        util_errf(err, errlen, "gnuplot not found (install gnuplot-nox, see "
                  "deps/sim.txt, or pass --no-plots)");
        return -1;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        util_errf(err, errlen, "gnuplot failed on %s/plots.gp", dir);
        return -1;
    }
    return 0;
}

static int html_text(FILE *f, const char *s)
{
    int rc = 0;
    for (; *s; s++) {
        switch (*s) {
        case '<': rc |= fputs("&lt;", f) < 0; break;
        case '>': rc |= fputs("&gt;", f) < 0; break;
        case '&': rc |= fputs("&amp;", f) < 0; break;
        case '"': rc |= fputs("&quot;", f) < 0; break;
        default: rc |= fputc(*s, f) == EOF;
        }
    }
    return rc;
}

static const report_run *find_run(const report_input *in, const char *name)
{
    for (size_t r = 0; r < in->nruns; r++)
        if (!strcmp(in->runs[r].name, name))
            return &in->runs[r];
    return NULL;
}

/* The comparison the paper makes: each policy against fair. */
static int html_versus_fair(FILE *f, const report_input *in)
{
    const report_run *fair = find_run(in, "fair");
    if (!fair || in->nruns < 2)
        return 0;
    int i90 = sim_x_index(90), i95 = sim_x_index(95);
    int rc = fputs("<h2>Against fair</h2>\n<table>\n<tr><th>policy</th>"
                   "<th>time to 90% cut</th><th>time to 95% cut</th>"
                   "<th>average loss: fair / policy</th></tr>\n", f) < 0;
    for (size_t r = 0; r < in->nruns; r++) {
        const sim_summary *s = in->runs[r].sum, *b = fair->sum;
        if (&in->runs[r] == fair)
            continue;
        rc |= fputs("<tr><td>", f) < 0;
        rc |= html_text(f, in->runs[r].name);
        rc |= fprintf(f, "</td><td>%.1f%%</td><td>%.1f%%</td><td>%.2f×"
                      "</td></tr>\n",
                      100 * (1 - s->tx_mean[i90] / b->tx_mean[i90]),
                      100 * (1 - s->tx_mean[i95] / b->tx_mean[i95]),
                      b->avg_norm_loss / s->avg_norm_loss) < 0;
    }
    return rc | (fputs("</table>\n", f) < 0);
}

static int html_img(FILE *f, const char *file, const char *alt)
{
    int rc = fputs("<p><img src=\"", f) < 0;
    rc |= html_text(f, file);
    rc |= fputs("\" alt=\"", f) < 0;
    rc |= html_text(f, alt);
    return rc | (fputs("\"></p>\n", f) < 0);
}

static int write_html(const report_input *in, char *err, size_t errlen)
{
    FILE *f = open_in(in->dir, "report.html", err, errlen);
    if (!f)
        return -1;
    int rc = fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
                   "<title>slaq sim report</title>\n<style>body{font-family:"
                   "sans-serif;max-width:60em;margin:auto}table{border-"
                   "collapse:collapse}td,th{border:1px solid #aaa;padding:"
                   "2px 6px;text-align:right}</style></head><body>\n"
                   "<h1>slaq sim report</h1>\n<p>Workload: <code>", f) < 0;
    rc |= html_text(f, in->workload);
    rc |= fputs("</code><br>Command: <code>", f) < 0;
    rc |= html_text(f, in->command);
    rc |= fputs("</code></p>\n<p>Metrics as defined in docs/metrics.md: "
                "normalised loss (L − L_end)/(L(0) − L_end) averaged over "
                "active jobs at each epoch boundary and over time; time "
                "from arrival to the first completed iteration whose loss "
                "reduction reaches X%; cores by loss group ranked each "
                "epoch. sched_ms is the wall time of one scheduling epoch."
                "</p>\n<h2>Summary</h2>\n<table>\n<tr><th>policy</th>"
                "<th>predictor</th><th>jobs</th><th>avg norm loss</th>"
                "<th>t90 mean (s)</th><th>t95 mean (s)</th><th>JCT mean "
                "(s)</th><th>makespan (s)</th><th>share high / medium / "
                "low</th><th>sched ms mean / p99 / max</th><th>epochs</th>"
                "</tr>\n", f) < 0;
    int i90 = sim_x_index(90), i95 = sim_x_index(95);
    for (size_t r = 0; r < in->nruns; r++) {
        const report_run *run = &in->runs[r];
        const sim_summary *s = run->sum;
        rc |= fputs("<tr><td>", f) < 0;
        rc |= html_text(f, run->name);
        rc |= fprintf(f, "</td><td>%s</td><td>%zu</td><td>%.4f</td>"
                      "<td>%.1f</td><td>%.1f</td><td>%.1f</td><td>%.1f</td>"
                      "<td>%.2f / %.2f / %.2f</td><td>%.3f / %.3f / %.3f"
                      "</td><td>%zu</td></tr>\n",
                      run->cfg->policy == SLAQ_POLICY_FAIR
                          ? "none" : slaq_predictor_name(run->cfg->predictor),
                      s->jobs, s->avg_norm_loss, s->tx_mean[i90],
                      s->tx_mean[i95], s->jct_mean, s->makespan,
                      s->share[SIM_HIGH], s->share[SIM_MEDIUM],
                      s->share[SIM_LOW], s->sched_mean_ms, s->sched_p99_ms,
                      s->sched_max_ms, s->epochs) < 0;
    }
    rc |= fputs("</table>\n", f) < 0;
    rc |= html_versus_fair(f, in);
    if (in->plots) {
        rc |= fputs("<h2>Figures</h2>\n", f) < 0;
        rc |= html_img(f, "fig7a-loss.svg", "average normalised loss");
        rc |= html_img(f, "fig7b-reduction.svg", "time to X% reduction");
        for (size_t r = 0; r < in->nruns; r++) {
            char file[300];
            snprintf(file, sizeof file, "fig8-cores-%s.svg", in->runs[r].name);
            rc |= html_img(f, file, "cores by loss group");
        }
        if (in->nsweep)
            rc |= html_img(f, "fig9-sweep.svg", "arrival-rate sweep");
        rc |= html_img(f, "fig10c-sched.svg", "scheduling time");
    }
    if (in->nsweep) {
        rc |= fputs("<h2>Arrival-rate sweep</h2>\n<p>The workload's "
                    "arrivals rescaled to each mean inter-arrival time "
                    "(same jobs, same order).</p>\n<table>\n<tr><th>mean "
                    "inter-arrival (s)</th>", f) < 0;
        for (size_t r = 0; r < in->nruns; r++) {
            rc |= fputs("<th>", f) < 0;
            rc |= html_text(f, in->runs[r].name);
            rc |= fputs(" t90 / t95 (s)</th>", f) < 0;
        }
        rc |= fputs("</tr>\n", f) < 0;
        for (size_t i = 0; i < in->nsweep; i++) {
            rc |= fprintf(f, "<tr><td>%g</td>", in->sweep_ia[i]) < 0;
            for (size_t r = 0; r < in->nruns; r++) {
                const sim_summary *s = &in->sweep[i * in->nruns + r];
                rc |= fprintf(f, "<td>%.1f / %.1f</td>", s->tx_mean[i90],
                              s->tx_mean[i95]) < 0;
            }
            rc |= fputs("</tr>\n", f) < 0;
        }
        rc |= fputs("</table>\n", f) < 0;
    }
    rc |= fputs("<p>Data: <code>summary.json</code>, <code>reduction.csv"
                "</code>, <code>POLICY/timeline.csv</code>, <code>POLICY/"
                "jobs.csv</code>, <code>POLICY/sched.csv</code>, <code>"
                "POLICY/fig8.csv</code>, <code>POLICY/fig10c.csv</code>; "
                "figures: "
                "<code>plots.gp</code>.</p>\n"
                "</body></html>\n", f) < 0;
    return close_checked(f, "report.html", rc, err, errlen);
}

int report_write(const report_input *in, char *err, size_t errlen)
{
    if (write_reduction(in, err, errlen) ||
        (in->nsweep && write_sweep(in, err, errlen)) ||
        write_fig_data(in, err, errlen) || write_script(in, err, errlen) ||
        (in->plots && run_gnuplot(in->dir, err, errlen)) ||
        write_html(in, err, errlen))
        return -1;
    return 0;
}
