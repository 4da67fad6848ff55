/*
 * util.c — small numerical helpers shared by slaq-train's algorithms: a
 * seeded random generator (so runs are reproducible from --seed), softmax,
 * argmax and a checked allocator.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "train/train.h"

/* Allocation failure in a training job is not recoverable in any useful way;
 * say what was asked for and exit with the runtime-failure status. */
void *train_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) {
        fprintf(stderr, "slaq-train: out of memory (%zu x %zu bytes)\n", n,
                size);
        exit(1);
    }
    return p;
}

/* splitmix64: tiny, fast, and good enough for shuffling and initialisation. */
static uint64_t rand_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

double train_rand_uniform(uint64_t *state)
{
    return (double)(rand_next(state) >> 11) * 0x1.0p-53;
}

double train_rand_normal(uint64_t *state)
{
    double u1 = train_rand_uniform(state), u2 = train_rand_uniform(state);
    if (u1 < 1e-300)
        u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

double train_softmax(double *z, int k)
{
    double m = z[0], s = 0;
    for (int i = 1; i < k; i++)
        if (z[i] > m)
            m = z[i];
    for (int i = 0; i < k; i++) {
        z[i] = exp(z[i] - m);
        s += z[i];
    }
    for (int i = 0; i < k; i++)
        z[i] /= s;
    return m + log(s);
}

int train_argmax(const double *v, int k)
{
    int b = 0;
    for (int i = 1; i < k; i++)
        if (v[i] > v[b])
            b = i;
    return b;
}
