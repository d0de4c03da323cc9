/* Error names and the corruption report. */
#include "base/err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "base/log.h"

const char *err_name(int code)
{
    switch (code) {
    case ERR_OK: return "OK";
    case ERR_NOMEM: return "NOMEM";
    case ERR_IO: return "IO";
    case ERR_NOSPC: return "NOSPC";
    case ERR_CORRUPT: return "CORRUPT";
    case ERR_INVAL: return "INVAL";
    case ERR_NOTFOUND: return "NOTFOUND";
    case ERR_PERM: return "PERM";
    case ERR_BUSY: return "BUSY";
    case ERR_TOOBIG: return "TOOBIG";
    case ERR_EXISTS: return "EXISTS";
    case ERR_OFFLINE: return "OFFLINE";
    default: return "UNKNOWN";
    }
}

static _Thread_local char detail[512];

const char *err_detail(void)
{
    return detail;
}

void err_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
}

void err_clear(void)
{
    detail[0] = '\0';
}

int err_corrupt_at(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    log_error("corruption (%s:%d): %s", file, line, detail);
    return ERR_CORRUPT;
}

int err_from_errno(int e)
{
    switch (e) {
    case 0: return ERR_OK;
    case ENOSPC:
    case EDQUOT: return ERR_NOSPC;
    case ENOENT: return ERR_NOTFOUND;
    /* A file the daemon may not write is a server fault (500), not a
     * client's missing right (ERR_PERM is the auth layer's 403). */
    case ENOMEM: return ERR_NOMEM;
    case EEXIST: return ERR_EXISTS;
    default: return ERR_IO;
    }
}
