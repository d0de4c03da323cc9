/* The memory this process may use: the machine's RAM, or less when a
 * control group (a container, a systemd unit with MemoryMax=) sets a lower
 * limit. Sizes the caches that default to a share of it. */
#ifndef LB_SYSMEM_H
#define LB_SYSMEM_H

#include <stdint.h>

/* Bytes of RAM (sysconf), lowered to the cgroup v2 memory.max or the
 * cgroup v1 memory.limit_in_bytes of this process's group when set; 0 if
 * the RAM cannot be read. */
uint64_t sysmem_limit_bytes(void);

/* The cgroup limit in a memory.max / memory.limit_in_bytes file's text
 * ("max\n", "536870912\n"); 0 when the text sets none or is not a number. */
uint64_t sysmem_parse_limit(const char *text);

#endif
