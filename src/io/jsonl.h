/*
 * jsonl.h — the one JSON Lines loop under slaq's file readers (curves,
 * recorded query runs, recorded sweeps, workloads).
 *
 * A JSON Lines file holds one JSON object per line; blank lines are skipped.
 * The loop reads each line, parses it, and hands the object to the reader's
 * callback, so that every reader reports errors the same way:
 *
 *   FILE:LINE: the line is longer than N bytes, the cap of a line
 *   FILE:LINE: field 'F': an array of N values; a line may hold at most
 *              M JSON values in all   (or: more than the M JSON values ...)
 *   FILE:LINE:COL: malformed JSON: TEXT    (the line is not JSON)
 *   FILE:LINE:COL: expected a JSON object  (it is JSON, but not an object)
 *   FILE:LINE: MESSAGE                     (the callback refused the object)
 *   FILE: MESSAGE                          (the file cannot be opened/read)
 *
 * LINE and COL count from 1; COL counts characters as Jansson does. A field
 * error has no column (Jansson does not keep where a value stood).
 *
 * A line is refused, before any of it is parsed, when it is longer than
 * JSONL_MAX_LINE bytes or would make more than JSONL_MAX_VALUES JSON
 * values (strings, numbers, literals, arrays, objects; keys counted). The
 * largest legitimate line is a job or curve at the workload's cap of 10^7
 * iterations: 10^7 + 1 losses of up to 26 characters each ("-1.2345678901
 * 234567e-100, "), 260 MB; its parse holds the line, Jansson's tree (some
 * 40 bytes a value) and the reader's copy, about 0.8 GB at most. Readers
 * check their own, smaller caps on the objects they are handed.
 */
#ifndef SLAQ_IO_JSONL_H
#define SLAQ_IO_JSONL_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#define JSONL_MAX_LINE 268435456 /* bytes of a line, newline excluded */
#define JSONL_MAX_VALUES 10001024 /* 10^7 + 1 losses and 1,023 others */

/*
 * Called once per non-blank line with its object (borrowed: the loop frees
 * it after the call) and its 1-based line number. Returns 0 to go on; -1
 * stops the loop, and then msg must hold what was wrong (no "FILE:LINE:"
 * prefix; the loop adds it).
 */
typedef int (*jsonl_fn)(json_t *obj, int line, void *ctx, char *msg,
                        size_t msglen);

/*
 * Calls fn for every object of stream f, named `name` in messages. Returns
 * the number of objects handed to fn (0 for an empty or all-blank file), or
 * -1 with a message in err in the forms above. Does not close f.
 */
int jsonl_each_file(FILE *f, const char *name, jsonl_fn fn, void *ctx,
                    char *err, size_t errlen);

/* jsonl_each_file on the file at `path` (opened and closed here). */
int jsonl_each(const char *path, jsonl_fn fn, void *ctx, char *err,
               size_t errlen);

/*
 * Makes room for one more element in a growing array and returns its zeroed
 * slot. `arrayp` is the address of the array pointer (e.g. &set->v, for any
 * element type), n the elements in use, *cap the capacity (doubled as
 * needed, starting at `first`), size the element size. The caller fills the
 * slot and then increments its count. NULL when memory runs out (the array
 * is then unchanged).
 */
void *jsonl_push(void *arrayp, size_t n, size_t *cap, size_t size,
                 size_t first);

#endif
