/* Error codes shared by every layer: ERR_OK (0) or a negative ERR_*.
 * A function that can fail returns int; out-parameters are written only on
 * success. err_corrupt() logs where corruption was found and returns
 * ERR_CORRUPT, after SQLite's SQLITE_CORRUPT_BKPT. */
#ifndef LB_ERR_H
#define LB_ERR_H

enum {
    ERR_OK = 0,
    ERR_NOMEM = -1,
    ERR_IO = -2,
    ERR_NOSPC = -3,
    ERR_CORRUPT = -4,
    ERR_INVAL = -5,
    ERR_NOTFOUND = -6,
    ERR_PERM = -7,
    ERR_BUSY = -8,
    ERR_TOOBIG = -9,
    ERR_EXISTS = -10,
    ERR_OFFLINE = -11, /* a database that failed to open at start: offline */
};

/* Upper-case name of an error code ("CORRUPT"); "UNKNOWN" for others. */
const char *err_name(int code);

/* Logs "corruption at FILE:LINE: <message>" and returns ERR_CORRUPT. */
#define err_corrupt(...) err_corrupt_at(__FILE__, __LINE__, __VA_ARGS__)
int err_corrupt_at(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The detail of the last error noted on this thread: the message of the
 * last err_corrupt(), or of err_note(); "" after err_clear(). For a caller
 * that must say why an operation failed (a database that cannot open). */
const char *err_detail(void);
void err_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void err_clear(void);

/* Maps an errno value to an ERR_* code (ENOSPC/EDQUOT -> ERR_NOSPC, ENOENT
 * -> ERR_NOTFOUND, ENOMEM -> ERR_NOMEM, EEXIST -> ERR_EXISTS, else ERR_IO:
 * EACCES/EPERM/EROFS on the data directory are the server's fault, not a
 * client's missing right). */
int err_from_errno(int e);

#endif
