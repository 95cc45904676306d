/* The C client's catalog (tk_catalog_*), one method a line: name, request
 * type, reply type, kind (tk_method_kind's number), default timeout and
 * ceiling in ms, separated by spaces. For test_catalog.py, which compares
 * it with what tkd serves. */
#include <stdio.h>

#include <tk/client.h>

int main(void)
{
    for (size_t i = 0; i < tk_catalog_method_count(); i++) {
        const tk_method_desc *m = tk_catalog_method(i);
        printf("%s %s %s %d %u %u\n", m->name, m->request->name, m->reply->name,
               (int)m->kind, (unsigned)m->default_timeout_ms,
               (unsigned)m->ceiling_ms);
    }
    return fflush(stdout) == 0 ? 0 : 1;
}
