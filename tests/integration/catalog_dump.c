/* SPDX-License-Identifier: MIT */
/* The C client's catalog (tk_catalog_*), one method a line: name, request
 * type, reply type, kind (tk_method_kind's number), default timeout and
 * ceiling in ms, and the reply's list: its field, limit field, default
 * items, max items and max bytes ("-" for a field or limit field it does
 * not have), separated by spaces. For test_catalog.py, which compares it
 * with what tkd serves. */
#include <stdio.h>

#include <tk/client.h>

int main(void)
{
    for (size_t i = 0; i < tk_catalog_method_count(); i++) {
        const tk_method_desc *m = tk_catalog_method(i);
        printf("%s %s %s %d %u %u %s %s %u %u %u\n", m->name, m->request->name,
               m->reply->name, (int)m->kind, (unsigned)m->default_timeout_ms,
               (unsigned)m->ceiling_ms,
               m->list_field != NULL ? m->list_field : "-",
               m->limit_field != NULL ? m->limit_field : "-",
               (unsigned)m->default_items, (unsigned)m->max_items,
               (unsigned)m->max_bytes);
    }
    return fflush(stdout) == 0 ? 0 : 1;
}
