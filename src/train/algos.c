/*
 * algos.c — the table of slaq-train's algorithms, in the order of the SLAQ
 * paper's Table 1.
 */
#include <string.h>

#include "train/train.h"

const struct train_algo *const train_algos[] = {
    &train_algo_kmeans, &train_algo_logreg, &train_algo_svm,
    &train_algo_svmpoly, &train_algo_linreg, &train_algo_mlpc,
    &train_algo_gbt, &train_algo_gbtreg, &train_algo_lda, NULL,
};

const struct train_algo *train_algo_find(const char *name)
{
    for (int i = 0; train_algos[i]; i++)
        if (strcmp(train_algos[i]->name, name) == 0)
            return train_algos[i];
    return NULL;
}
