/* The web console's files (http/console/), built into the daemon: the
 * Makefile turns them into a generated C source (scripts/embed-console.pl)
 * that defines console_files[]. The data is read-only and lives as long as
 * the process. */
#ifndef LB_CONSOLE_H
#define LB_CONSOLE_H

#include <stddef.h>

struct console_file {
    const char *name;          /* file name under /ui/, e.g. "app.js" */
    const char *type;          /* Content-Type */
    const unsigned char *data; /* borrowed, static */
    size_t len;
    const char *etag; /* quoted strong ETag: a hash of the content */
};

extern const struct console_file console_files[];
extern const size_t console_nfiles;

/* The file called name (no leading slash), or NULL. "" is index.html. */
const struct console_file *console_find(const char *name);

#endif
