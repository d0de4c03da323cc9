/* SSTable test hooks (STYLE.md section 3): not for the store's own use. */
#ifndef LB_SST_INT_H
#define LB_SST_INT_H

#include <stdint.h>

/* The format version the builders created from now on write: 2 writes
 * version 2 files (no word filters), as the releases before version 3
 * did; 0 restores SST_VERSION. Not thread-safe: set it while no builder
 * is being created. */
void sst_test_set_version(uint32_t version);

#endif
