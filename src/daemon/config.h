/*
 * config.h — slaqd's configuration file (config.c).
 *
 * The file holds the same settings as slaqd's long options, one
 * "key = value" per line, keys being the option names without the dashes.
 * Reading it only finds the keys; the caller applies each value with the
 * same code that handles the option, so a setting means one thing whether
 * it comes from the file or the command line.
 */
#ifndef SLAQ_DAEMON_CONFIG_H
#define SLAQ_DAEMON_CONFIG_H

#include <getopt.h>

/*
 * Applies one setting: code is the option's getopt value, value its text
 * (NUL-terminated, owned by the file's text, which lives until
 * config_free), where a prefix for error messages ("FILE:LINE: key").
 * Returns 0, or -1 after printing an error that starts with where.
 */
typedef int (*config_apply_fn)(void *ctx, int code, const char *value,
                               const char *where);

/*
 * Reads the configuration file at path and calls apply for each setting,
 * in file order. Keys are matched against opts (the long options; those
 * whose val is in `refused`, a string of option codes terminated by 0,
 * cannot be set in a file). Blank lines and lines starting with '#' are
 * skipped; a '#' after whitespace starts a comment. Returns 0, or -1
 * after printing "slaqd: FILE:LINE: ..." for a line without '=', an
 * unknown or refused key, a key given twice, a missing value, or an
 * error from apply. *text receives the file's contents, which the values
 * point into: free it with config_free() once the settings are no longer
 * used (also after an error).
 */
int config_read(const char *path, const struct option *opts,
                const int *refused, config_apply_fn apply, void *ctx,
                char **text);

void config_free(char *text);

#endif
