/* The store tests' usual start: a store in a new temporary directory with
 * one database "d". In a file of its own so that tests of lower layers,
 * which link the support library, do not pull in the store. */
#ifndef LB_STORE_FIXTURE_H
#define LB_STORE_FIXTURE_H

#include "store/store.h"

/* Sets o->dir to a new temporary directory (tag names it), opens the
 * store with o and creates and gets database "d" with dbo. ERR_OK, or the
 * code of the call that failed. *dir is the caller's (tu_store_close). */
int tu_store_with_db(const char *tag, struct store_opts *o, const struct db_opts *dbo, char **dir,
                     struct store **s, struct store_db **db);
/* For a database that store_db_get finds offline: what opening it
 * returned (it fails the test when no reason is given), and closes s. */
int tu_offline_rc(struct store *s, const char *name);
/* Releases db, closes s, removes dir and frees it. */
void tu_store_close(char *dir, struct store *s, struct store_db *db);

#endif
