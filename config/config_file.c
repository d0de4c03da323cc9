/* Reading the flat INI config file with inih (libinih v55). inih reads
 * through our line reader, which counts lines (inih's handler gets no line
 * number), strips leading blanks (so an indented line is never glued to the
 * previous value as a multi-line continuation), and reports lines that are
 * too long, have no '=' or open a [section] instead of passing them on. */
#include "config/config.h"

#include <errno.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/err.h"
#include "config/config_int.h"

#define MAX_ERRORS 20

struct load {
    struct config *c;
    const char *name; /* the file, as named in messages */
    FILE *f;
    char *line; /* getline buffer */
    size_t cap;
    int lineno;
    int *first_line; /* per option: line it was first set on, 0 if not yet */
    int nerrors;
    struct buf *err;
};

static void load_error(struct load *ld, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void load_error(struct load *ld, const char *fmt, ...)
{
    ld->nerrors++;
    if (ld->nerrors > MAX_ERRORS)
        return;
    buf_printf(ld->err, "%s:%d: ", ld->name, ld->lineno);
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(ld->err, fmt, ap);
    va_end(ap);
    buf_putc(ld->err, '\n');
}

static size_t rstrip_len(const char *s, size_t len)
{
    while (len > 0 &&
           (s[len - 1] == '\n' || s[len - 1] == '\r' || s[len - 1] == ' ' || s[len - 1] == '\t'))
        len--;
    return len;
}

/* ini_reader: hands inih one line at a time, or an empty line in place of
 * a line we have already reported. */
static char *read_line(char *str, int num, void *stream)
{
    struct load *ld = stream;
    ssize_t got = getline(&ld->line, &ld->cap, ld->f);
    if (got < 0)
        return NULL;
    ld->lineno++;
    str[0] = '\0';
    if (memchr(ld->line, '\0', (size_t)got) != NULL) {
        load_error(ld, "the line holds a NUL byte");
        return str;
    }
    char *p = ld->line;
    if (ld->lineno == 1 && strncmp(p, "\xef\xbb\xbf", 3) == 0)
        p += 3;
    p += strspn(p, " \t");
    size_t len = rstrip_len(p, strlen(p));
    p[len] = '\0';
    if (len == 0 || p[0] == '#' || p[0] == ';')
        return str;
    if ((int)len > num - 3) {
        load_error(ld, "line too long (%zu bytes; at most %d)", len, num - 3);
        return str;
    }
    if (p[0] == '[') {
        load_error(ld, "sections are not used: the config file is a flat list of key = value");
        return str;
    }
    if (!strchr(p, '=')) {
        /* A token line without '=' would show its secret. */
        bool secret = strncmp(p, "token", 5) == 0;
        load_error(ld, "expected key = value, got \"%s\"", secret ? "token <hidden>" : p);
        return str;
    }
    memcpy(str, p, len);
    str[len] = '\n';
    str[len + 1] = '\0';
    return str;
}

/* Cuts an inline "# comment" (a '#' after a blank, outside double quotes).
 * inih has already cut inline "; comments". */
static void cut_comment(char *v)
{
    bool quoted = false;
    for (char *p = v; *p; p++) {
        if (*p == '"')
            quoted = !quoted;
        else if (*p == '#' && !quoted && (p == v || p[-1] == ' ' || p[-1] == '\t')) {
            *p = '\0';
            break;
        }
    }
}

static int on_value(void *user, const char *section, const char *name, const char *value)
{
    struct load *ld = user;
    (void)section; /* read_line never passes a [section] line on */
    if (name[0] == '\0') {
        load_error(ld, "expected key = value: the key is missing");
        return 1;
    }
    int idx = cfg_int_option_index(name);
    if (idx >= 0 && !cfg_int_option_repeats(idx)) {
        if (ld->first_line[idx]) {
            load_error(ld, "%s is set again (first on line %d); only token may repeat", name,
                       ld->first_line[idx]);
            return 1;
        }
        ld->first_line[idx] = ld->lineno;
    }
    char *v = xstrdup(value);
    cut_comment(v);
    char origin[512];
    snprintf(origin, sizeof origin, "%s:%d", ld->name, ld->lineno);
    struct buf msg = BUF_INIT;
    if (cfg_set(ld->c, name, v, origin, &msg) != ERR_OK) {
        ld->nerrors++;
        if (ld->nerrors <= MAX_ERRORS)
            buf_append(ld->err, msg.data, msg.len);
    }
    buf_destroy(&msg);
    free(v);
    /* Errors are collected here; inih's own count would only repeat them. */
    return 1;
}

static int load_stream(struct config *c, FILE *f, const char *name, struct buf *err)
{
    struct load ld = {
        .c = c,
        .name = name,
        .f = f,
        .err = err,
        .first_line = xcalloc(cfg_int_noptions(), sizeof(int)),
    };
    int rc = ini_parse_stream(read_line, &ld, on_value, &ld);
    if (rc > 0 && ld.nerrors == 0) {
        ld.lineno = rc;
        load_error(&ld, "syntax error");
    } else if (rc < 0 && ld.nerrors == 0) {
        buf_printf(err, "%s: inih could not read the file (%d)\n", name, rc);
        ld.nerrors++;
    }
    if (ferror(f)) {
        buf_printf(err, "%s: read error: %s\n", name, strerror(errno));
        ld.nerrors++;
    }
    if (ld.nerrors > MAX_ERRORS)
        buf_printf(err, "%s: %d more errors\n", name, ld.nerrors - MAX_ERRORS);
    free(ld.line);
    free(ld.first_line);
    return ld.nerrors ? ERR_INVAL : ERR_OK;
}

int cfg_load_file(struct config *c, const char *path, struct buf *err)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        int e = errno;
        buf_printf(err, "cannot open config file %s: %s\n", path, strerror(e));
        return err_from_errno(e);
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        buf_printf(err, "cannot read config file %s: %s\n", path, strerror(EISDIR));
        fclose(f);
        return err_from_errno(EISDIR);
    }
    int rc = load_stream(c, f, path, err);
    fclose(f);
    return rc;
}

int cfg_load_string(struct config *c, const char *text, const char *name, struct buf *err)
{
    size_t len = strlen(text);
    if (len == 0)
        return ERR_OK;
    FILE *f = fmemopen((void *)text, len, "r");
    if (!f) {
        buf_printf(err, "%s: cannot read config text: %s\n", name, strerror(errno));
        return ERR_NOMEM;
    }
    int rc = load_stream(c, f, name, err);
    fclose(f);
    return rc;
}
