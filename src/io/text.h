/*
 * text.h — making untrusted text safe to print: the one escaping function
 * for everything slaq prints that came from someone else (job and node
 * names, commands, reasons and strings agents send), on a terminal by the
 * slaq command and in slaqd's log; and reading a line of a text file with
 * a bound on its length, for the readers of files that may come from
 * anyone (traces).
 */
#ifndef SLAQ_IO_TEXT_H
#define SLAQ_IO_TEXT_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/*
 * Copies s into out (cap bytes, cap >= 1, always NUL-terminated) with every
 * character that could act on a terminal or reorder what is shown written
 * as an escape instead:
 *   C0 controls (newline and tab included), DEL, and bytes that are not
 *   well-formed UTF-8                                        as \xNN
 *   C1 controls U+0080..U+009F                                as \xNN
 *     (their code point, as a terminal would have read the byte)
 *   bidirectional controls U+061C, U+200E, U+200F, U+202A..U+202E,
 *   U+2066..U+2069, and the separators U+2028, U+2029        as \uXXXX
 * Other UTF-8 is copied as it is. An escape or character that does not fit
 * whole ends the copy. Returns out.
 */
char *text_escape(char *out, size_t cap, const char *s);

/*
 * Reads one line of f, its newline included, into *line (grown with
 * realloc as needed, never past max + 2 bytes; the caller frees it) and
 * NUL-terminates it. Returns its length in bytes, which is more than
 * strlen(*line) when the line holds a NUL byte; -1 at the end of the
 * stream (or a read error: see ferror); -2 for a line longer than max
 * bytes, read no further; -3 when out of memory.
 */
ssize_t text_read_line(FILE *f, char **line, size_t *cap, size_t max);

#endif
