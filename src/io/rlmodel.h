/*
 * rlmodel.h — MLF-RL's network (slaq_rl_model, include/slaq/deadline.h)
 * in a file: the model `slaq sim --deadlines --train mlfs-rl` writes and
 * `--model` reads.
 *
 * The format is text, one record a line, so that a committed model can be
 * read and compared:
 *
 *   slaq-rl-model 1                       magic and version
 *   features 8 hidden 16                  the network's sizes
 *   unit K w_0 ... w_7 b w2               one line per hidden unit K =
 *                                         0..15, in order: its weights
 *                                         from the features, its bias,
 *                                         its weight in the score
 *   output b2                             the score's bias
 *
 * Lines starting with '#' (after the first) are comments: the trainer
 * writes the command and seed that made the model there. Numbers are C
 * doubles written with 17 significant digits, so a model read back is
 * bit for bit the model written. Anything else is refused with the file,
 * the line and what was expected.
 */
#ifndef SLAQ_IO_RLMODEL_H
#define SLAQ_IO_RLMODEL_H

#include <stddef.h>

#include "slaq/deadline.h"

#define RLM_VERSION 1

/* Parses the text of a model (NUL-terminated; `name` names it in
 * messages). 0, or -1 with a message. */
int rlm_parse(const char *text, const char *name, slaq_rl_model *m,
              char *err, size_t errlen);
/* Reads a model file. 0, or -1 with a message. */
int rlm_read(const char *path, slaq_rl_model *m, char *err, size_t errlen);
/* The committed network that slaqd --rl-model and slaq sim --deadlines
 * --model read when not given one: SLAQ_DATADIR/slaq/mlfs-rl.model when
 * the running program is the installed one (it runs from SLAQ_BINDIR;
 * make install puts the model there), otherwise the source tree's
 * data/models/mlfs-rl.model, the tree the program was built from. The
 * path is in a static buffer; the file may not exist. */
const char *rlm_default_path(void);
/* Writes m to path (each line of `comment`, which may be NULL, as a '#'
 * line). 0, or -1 with a message. */
int rlm_write(const char *path, const slaq_rl_model *m, const char *comment,
              char *err, size_t errlen);

#endif
