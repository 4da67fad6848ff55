/*
 * text.c — escaping untrusted text for terminals and logs (text.h).
 *
 * A name like "job\x1b]0;owned\x07" retitles the terminal of whoever lists
 * it, and one with U+202E shows its tail reversed ("gnp.exe" for
 * "exe.png"). Both are shown here as escapes; everything else of a valid
 * UTF-8 string, accents and CJK included, stays as written.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/text.h"

/* The length of the well-formed UTF-8 sequence at s (1 to 4) and its code
 * point in *cp, or 0 when s does not start one (overlong forms,
 * surrogates and values above U+10FFFF are not well-formed). */
static size_t utf8_next(const unsigned char *s, uint32_t *cp)
{
    unsigned char c = s[0];
    size_t n;
    uint32_t v, min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, v = c & 0x1f, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, v = c & 0x0f, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, v = c & 0x07, min = 0x10000;
    else
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        v = v << 6 | (s[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return n;
}

static int is_bidi_or_separator(uint32_t cp)
{
    return cp == 0x061c || cp == 0x200e || cp == 0x200f ||
           (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
           cp == 0x2028 || cp == 0x2029;
}

char *text_escape(char *out, size_t cap, const char *s)
{
    size_t o = 0;
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        char esc[16];
        uint32_t cp = 0;
        size_t n = utf8_next(p, &cp), len;
        const char *piece;
        if (n == 0) {
            snprintf(esc, sizeof esc, "\\x%02x", *p);
            n = 1;
            piece = esc;
        } else if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) {
            snprintf(esc, sizeof esc, "\\x%02x", (unsigned)cp);
            piece = esc;
        } else if (is_bidi_or_separator(cp)) {
            snprintf(esc, sizeof esc, "\\u%04x", (unsigned)cp);
            piece = esc;
        } else {
            piece = (const char *)p;
        }
        len = piece == esc ? strlen(esc) : n;
        if (o + len >= cap)
            break;
        memcpy(out + o, piece, len);
        o += len;
        p += n;
    }
    out[o] = 0;
    return out;
}

ssize_t text_read_line(FILE *f, char **line, size_t *cap, size_t max)
{
    size_t len = 0;
    int ch;
    while ((ch = getc_unlocked(f)) != EOF) {
        if (len + 2 > *cap) {
            size_t c = *cap ? 2 * *cap : 4096;
            if (c > max + 2)
                c = max + 2;
            char *nl = realloc(*line, c);
            if (!nl)
                return -3;
            *line = nl;
            *cap = c;
        }
        (*line)[len++] = (char)ch;
        if (ch == '\n')
            break;
        if (len > max)
            return -2;
    }
    if (len == 0)
        return -1;
    (*line)[len] = 0;
    return (ssize_t)len;
}
