/* libFuzzer target for the SQL parser: any bytes as a script, a WHERE list,
 * a time and a duration. The parser must accept or refuse with a message
 * naming a position, never crash, read out of bounds or leak. The input is
 * copied to an exact-size heap buffer without a NUL, so ASan sees any read
 * past its end. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/err.h"
#include "query/sql.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size ? size : 1);
    if (size)
        memcpy(text, data, size);
    const int64_t now = 1700000000000000000LL;
    struct buf err = BUF_INIT;

    struct sql_script script;
    int rc = sql_parse(text, size, now, &script, &err);
    if (rc == ERR_OK)
        sql_script_destroy(&script);
    else if (err.len == 0 || !strstr(buf_cstr(&err), "position"))
        abort(); /* a refusal must say where */

    buf_reset(&err);
    struct sql_where where;
    sql_where_init(&where);
    if (sql_parse_where(text, size, now, &where, &err) == ERR_OK)
        sql_where_destroy(&where);

    int64_t v;
    buf_reset(&err);
    (void)sql_parse_time(text, size, now, &v);
    (void)sql_parse_duration(text, size, &v);

    buf_destroy(&err);
    free(text);
    return 0;
}
