/* Config-module private declarations, shared by config.c, config_file.c
 * and config_args.c. Not for other modules. */
#ifndef LB_CONFIG_INT_H
#define LB_CONFIG_INT_H

#include <stdbool.h>
#include <stddef.h>

/* Index of key in the option table, or -1. */
int cfg_int_option_index(const char *key);
/* Number of rows in the option table. */
size_t cfg_int_noptions(void);
/* True if the option at index may appear more than once in a file. */
bool cfg_int_option_repeats(int index);

#endif
