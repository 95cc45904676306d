/* SPDX-License-Identifier: MIT */
/* The heap: what the allocator holds free, giving it back to the system,
 * and the process's resident memory. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "port_config.h"

#if TK_HAVE_MALLOC_TRIM
#include <malloc.h>
#endif

#include "port.h"

int64_t port_heap_idle_bytes(void)
{
#if TK_HAVE_MALLOC_TRIM
    /* Free chunks of every arena (fordblks) and of the fast bins (fsmblks),
     * which malloc_trim releases page by page. */
    struct mallinfo2 mi = mallinfo2();
    return (int64_t)(mi.fordblks + mi.fsmblks);
#else
    return -1;
#endif
}

void port_heap_trim(void)
{
#if TK_HAVE_MALLOC_TRIM
    (void)malloc_trim(0); /* 1: something was released; either is fine */
#endif
}

int64_t port_rss_bytes(void)
{
#if TK_HAVE_PROC_SELF_FD /* /proc is there */
    /* "size resident shared ...", in pages */
    FILE *f = fopen("/proc/self/statm", "re");
    if (f == NULL)
        return -1;
    char line[128];
    bool got = fgets(line, sizeof line, f) != NULL;
    (void)fclose(f); /* read only */
    char *end = line;
    if (got)
        (void)strtoll(line, &end, 10);
    char *field = end;
    long long resident = got ? strtoll(field, &end, 10) : -1;
    long page = sysconf(_SC_PAGESIZE);
    if (!got || end == field || resident < 0 || page <= 0)
        return -1;
    return (int64_t)resident * page;
#else
    return -1;
#endif
}
