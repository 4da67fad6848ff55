/*
 * settings.h — the scheduler's settings: one table for every front end.
 *
 * Each row of the table names one field of slaq_sched_config that a user
 * may set: its spelling (the option's name without the dashes, and the
 * key of slaqd's configuration file), its type, where it lives in the
 * structure, the values it takes, its default, and a paragraph of help.
 * slaq_sched_config_init() gives exactly the table's defaults. slaqd's
 * options and configuration file, `slaq sim`, `slaq sim --aqp` and `slaq
 * replay` build their options and their --help from the table, parse with
 * slaq_sched_config_set(), and `slaq status` prints slaqd's settings with
 * slaq_sched_config_get(): a setting means the same thing, with the same
 * range and the same error message, wherever it is given.
 *
 * Adding a scheduler setting is one row in src/core/settings.c (beside
 * its field in slaq_sched_config): every front end then takes it as an
 * option, slaqd's file as a key, and `slaq status` shows it.
 *
 * Like the rest of libslaq, this does no I/O: errors are returned as
 * messages for the caller to print.
 */
#ifndef SLAQ_SETTINGS_H
#define SLAQ_SETTINGS_H

#include <stddef.h>

#include "slaq/slaq.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum slaq_setting_type {
    SLAQ_SETTING_DOUBLE, /* a double: a number in [min, max] */
    SLAQ_SETTING_UINT,   /* an unsigned: a whole number in [min, max] */
    SLAQ_SETTING_SIZE,   /* a size_t: a whole number in [min, max] */
    SLAQ_SETTING_ENUM,   /* an enum field, given by the name of a value */
    SLAQ_SETTING_SPEC,   /* a field with a syntax of its own ("mwt:30"),
                            read and written by the row's functions */
} slaq_setting_type;

typedef struct slaq_setting {
    const char *name;       /* "hysteresis": option, file key, status key */
    slaq_setting_type type;
    size_t offset;          /* of the field in slaq_sched_config */
    /* Numbers: the range, each bound included unless marked excluded
     * (max = INFINITY: no upper bound). */
    double min, max;
    int min_excluded, max_excluded;
    double dflt;            /* the default (an enum's: the value) */
    /* Enums: the values a user may choose, and their names; or, where
     * another table of libslaq owns the values (the share policies),
     * `count` gives them as 0 .. count() - 1 and `values` is NULL. Read
     * them with slaq_setting_nvalues() and slaq_setting_value(). */
    const int *values;
    size_t nvalues;
    size_t (*count)(void);
    const char *(*value_name)(int value);
    /* Specs: the reader (SLAQ_OK, or SLAQ_EINVAL leaving the field as it
     * was) and writer (as snprintf) of the field, the default as text,
     * and what it takes in words ("auto, a whole number or mwt:SECONDS"). */
    int (*parse)(const char *text, void *field);
    int (*format)(const void *field, char *buf, size_t len);
    const char *dflt_text;
    const char *expect;
    const char *arg;        /* the value's placeholder in --help: "H" */
    const char *unit;       /* a number's unit ("s", "cores"), or NULL */
    const char *help;       /* one paragraph: what the setting does */
} slaq_setting;

/* An enum setting's number of values, and its i-th value. */
size_t slaq_setting_nvalues(const slaq_setting *s);
int slaq_setting_value(const slaq_setting *s, size_t i);

/* The table: slaq_setting_count() rows, in the order --help lists them. */
size_t slaq_setting_count(void);
const slaq_setting *slaq_setting_at(size_t i);   /* NULL if i is too big */
/* The row named `name`, or NULL. */
const slaq_setting *slaq_setting_find(const char *name);

/*
 * What a setting takes, in words, into buf (always NUL-terminated): "a
 * positive number", "a whole number from 0 to 1000", "a number from 0 to
 * 1 (1 excluded)", "fair, slaq, slaq-maxmin or relaqs". Error messages
 * and --help texts use it. Returns the length it needed, as snprintf.
 */
int slaq_setting_expect(const slaq_setting *s, char *buf, size_t len);

/*
 * Sets the setting `name` of cfg from its text `value` (a number as strtod
 * reads it, whole for UINT and SIZE; an enum's value by name). Returns
 * SLAQ_OK, or SLAQ_EINVAL with cfg unchanged and err (if not NULL; errlen
 * bytes, always NUL-terminated) saying what went wrong, the setting's
 * name first:
 *   "hysteresis: expected a number from 0 to 1000, got '2000'"
 *   "policy: unknown policy 'fast' (expected fair, slaq, slaq-maxmin or
 *    relaqs)"
 *   "speed: no such setting"
 */
int slaq_sched_config_set(slaq_sched_config *cfg, const char *name,
                          const char *value, char *err, size_t errlen);

/*
 * The current value of setting `name` in cfg as text that
 * slaq_sched_config_set() takes back unchanged (numbers round-trip
 * exactly: "0.5", "1000", "0.1"; enums by name), into buf. Returns the
 * length needed, as snprintf, or SLAQ_EINVAL for an unknown name (buf
 * then empty).
 */
int slaq_sched_config_get(const slaq_sched_config *cfg, const char *name,
                          char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* SLAQ_SETTINGS_H */
