/* tests/support/store_fixture.h */
#include "tests/support/store_fixture.h"

#include <stdlib.h>
#include <string.h>

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

int tu_offline_rc(struct store *s, const char *name)
{
    struct store_offline *v;
    size_t n = store_offline_list(s, &v);
    int rc = ERR_OK;
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].name, name) == 0) {
            rc = v[i].rc;
            if (!v[i].why || strlen(v[i].why) < 5)
                abort(); /* an offline database must say why */
        }
    store_offline_free(v, n);
    store_close(s);
    return rc;
}
