/* tests/support/store_fixture.h */
#include "tests/support/store_fixture.h"

#include <stdlib.h>

#include "base/err.h"
#include "tests/support/store_testutil.h"

int tu_store_with_db(const char *tag, struct store_opts *o, const struct db_opts *dbo, char **dir,
                     struct store **s, struct store_db **db)
{
    *dir = tu_mkdtemp(tag);
    o->dir = *dir;
    int rc = store_open(o, s);
    if (rc == ERR_OK)
        rc = store_db_create(*s, "d", dbo);
    if (rc == ERR_OK)
        rc = store_db_get(*s, "d", db);
    return rc;
}

void tu_store_close(char *dir, struct store *s, struct store_db *db)
{
    store_db_unref(db);
    store_close(s);
    tu_rmtree(dir);
    free(dir);
}
