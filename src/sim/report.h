/*
 * report.h — the plots and the HTML page of a `slaq sim` run.
 *
 * The figures of the SLAQ paper's evaluation, drawn by gnuplot from the
 * CSV files the simulator writes: average normalised loss over time
 * (Fig. 7a), mean time to X% loss reduction (Fig. 7b), cores by loss group
 * over time as stacked areas (Fig. 8), the median scheduling time against
 * active jobs (Fig. 10c) and, with a sweep, time to 90%/95% against the mean
 * inter-arrival time (Fig. 9). report.html shows them next to the numbers.
 */
#ifndef SLAQ_SIM_REPORT_H
#define SLAQ_SIM_REPORT_H

#include <stddef.h>

#include "sim/sim.h"

/* One simulated policy; its files are in DIR/<name>/. */
typedef struct report_run {
    const char *name;
    const sim_config *cfg;
    const sim_summary *sum;
} report_run;

typedef struct report_input {
    const char *dir;         /* where everything is written */
    const char *workload;    /* the workload file, as given */
    const char *command;     /* the command line, shown in the page */
    const report_run *runs;
    size_t nruns;
    const double *sweep_ia;  /* mean inter-arrival times of the sweep */
    size_t nsweep;
    const sim_summary *sweep; /* [i * nruns + r]: sweep_ia[i], runs[r] */
    int plots;               /* render the SVGs with gnuplot */
} report_input;

/*
 * Writes DIR/reduction.csv, DIR/sweep.csv (with a sweep), DIR/plots.gp,
 * the SVGs (when plots is set; runs gnuplot in DIR) and DIR/report.html.
 * Returns 0, or -1 with a message in err.
 */
int report_write(const report_input *in, char *err, size_t errlen);

#endif
