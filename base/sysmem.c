/* sysmem.h: sysconf for the RAM, /proc/self/cgroup for the group, its
 * memory.max (v2) or memory.limit_in_bytes (v1) under /sys/fs/cgroup. */
#include "base/sysmem.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

uint64_t sysmem_parse_limit(const char *text)
{
    if (!text || text[0] < '0' || text[0] > '9')
        return 0; /* "max", empty */
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || (*end && *end != '\n'))
        return 0;
    return (uint64_t)v;
}

static uint64_t read_limit(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[64];
    uint64_t v = fgets(line, sizeof line, f) ? sysmem_parse_limit(line) : 0;
    fclose(f);
    return v;
}

/* The limit of this process's group: the v2 line "0::/path", or the v1
 * line whose controllers include memory ("4:memory:/path"). */
static uint64_t cgroup_limit(void)
{
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f)
        return 0;
    char line[512], path[600];
    uint64_t limit = 0;
    while (!limit && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c2 = '\0';
        const char *ctrls = c1 + 1, *group = c2 + 1;
        if (!*ctrls) {
            snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.max", group);
            limit = read_limit(path);
        } else if (strstr(ctrls, "memory")) {
            snprintf(path, sizeof path, "/sys/fs/cgroup/memory%s/memory.limit_in_bytes", group);
            limit = read_limit(path);
        }
    }
    fclose(f);
    return limit;
}

uint64_t sysmem_limit_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0)
        return 0;
    uint64_t ram = (uint64_t)pages * (uint64_t)page;
    uint64_t cg = cgroup_limit();
    return cg && cg < ram ? cg : ram; /* v1 says "no limit" with a huge number */
}
