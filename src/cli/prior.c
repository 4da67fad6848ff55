/*
 * prior.c — `slaq prior`: the class priors the scheduler values a job by
 * while its loss has not moved (docs/libslaq.md, "Class priors"), built
 * in or learned from a curve file.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "io/curves.h"
#include "slaq/slaq.h"

static void prior_usage(FILE *f)
{
    fprintf(f,
        "usage: slaq prior [--curves FILE]\n\n"
        "Prints the class priors: for each convergence class, how many\n"
        "recorded curves it was learned from, the median iterations to half\n"
        "and to 90%% of a curve's drop, and the median drop as a fraction of\n"
        "the first loss. A job whose loss has not moved yet is valued by its\n"
        "class's prior (slaqd and slaq sim --prior on). Without --curves,\n"
        "the priors built in (learned from tests/data/curves-dev.jsonl);\n"
        "with it, the priors learned from FILE (docs/formats.md, curve\n"
        "files; a curve's \"convergence\" is its class, unknown when absent;\n"
        "the unknown row holds every curve).\n\n"
        "  --curves FILE  learn from FILE\n"
        "  -h, --help     this text\n");
}

static int print_prior(const slaq_prior *p)
{
    printf("%-10s %7s %11s %11s %9s\n", "class", "curves", "half_iters",
           "done_iters", "rel_drop");
    for (int c = 0; c < SLAQ_NCONV; c++) {
        const slaq_prior_class *r = &p->cls[c];
        if (!r->curves) {
            printf("%-10s %7d %11s %11s %9s\n",
                   slaq_convergence_name((slaq_convergence)c), 0, "-", "-",
                   "-");
            continue;
        }
        printf("%-10s %7zu %11.6g %11.6g %9.6g\n",
               slaq_convergence_name((slaq_convergence)c), r->curves,
               r->half_iters, r->done_iters, r->rel_drop);
    }
    return ferror(stdout) ? EXIT_FAILURE : EXIT_SUCCESS;
}

int cmd_prior(int argc, char **argv)
{
    static const struct option opts[] = {
        {"curves", required_argument, 0, 'c'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    const char *path = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'c': path = optarg; break;
        case 'h': prior_usage(stdout); return EXIT_SUCCESS;
        default: prior_usage(stderr); return EXIT_USAGE;
        }
    }
    if (optind < argc) {
        cli_error(argv[0], "unexpected argument '%s'", argv[optind]);
        return EXIT_USAGE;
    }
    if (!path)
        return print_prior(slaq_prior_default());
    curve_set cs;
    char err[512];
    if (curves_load(path, &cs, err, sizeof err)) {
        cli_error(argv[0], "%s", err);
        return EXIT_USAGE;
    }
    const double **loss = malloc((cs.n ? cs.n : 1) * sizeof *loss);
    size_t *len = malloc((cs.n ? cs.n : 1) * sizeof *len);
    slaq_convergence *cls = malloc((cs.n ? cs.n : 1) * sizeof *cls);
    int rc = EXIT_FAILURE;
    if (!loss || !len || !cls) {
        cli_error(argv[0], "out of memory");
        goto out;
    }
    for (size_t i = 0; i < cs.n; i++) {
        loss[i] = cs.v[i].loss;
        len[i] = cs.v[i].n;
        if (!cs.v[i].convergence ||
            slaq_convergence_parse(cs.v[i].convergence, &cls[i]) != SLAQ_OK)
            cls[i] = SLAQ_CONV_UNKNOWN;
    }
    slaq_prior p;
    if (slaq_prior_learn(loss, len, cls, cs.n, &p) != SLAQ_OK) {
        cli_error(argv[0], "%s: no curve whose loss falls: nothing to learn",
                  path);
        rc = EXIT_USAGE;
        goto out;
    }
    rc = print_prior(&p);
out:
    free(loss);
    free(len);
    free(cls);
    curves_free(&cs);
    return rc;
}
