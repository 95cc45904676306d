/* rg --json: one JSON object per line, {"type": T, "data": {...}} with T
 * begin, match, context, end or summary. A path or a line is {"text": s}
 * when it is valid UTF-8, else {"bytes": base64}. A match is one line
 * ("lines", its terminator included) with its "line_number" and the byte
 * offsets of every occurrence ("submatches": [{"start", "end"}]). The
 * rest (begin, end, context, and the summary, whose stats count only the
 * files with matches) is not needed here and passed over. */
#include <string.h>

#include <json-c/json.h>

#include "search_int.h"

/* A {"text"} or {"bytes"} value: borrowed from the JSON, or decoded into
 * scratch. */
static bool rg_data(json_object *o, search_buf *scratch, const char **out,
                    size_t *len)
{
    json_object *v;
    if (json_object_object_get_ex(o, "text", &v) &&
        json_object_is_type(v, json_type_string)) {
        *out = json_object_get_string(v);
        *len = (size_t)json_object_get_string_len(v);
        return true;
    }
    if (json_object_object_get_ex(o, "bytes", &v) &&
        json_object_is_type(v, json_type_string) &&
        search__base64_decode(scratch, json_object_get_string(v),
                              (size_t)json_object_get_string_len(v)) == 0) {
        *out = scratch->data;
        *len = scratch->len;
        return true;
    }
    return false;
}

static int64_t int_field(json_object *o, const char *key)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v) ||
        !json_object_is_type(v, json_type_int))
        return -1;
    return json_object_get_int64(v);
}

/* rg's own offsets, those that are sane for the line. */
static bool rg_spans(search_parser *p, json_object *data, size_t text_len)
{
    json_object *subs;
    if (!json_object_object_get_ex(data, "submatches", &subs) ||
        !json_object_is_type(subs, json_type_array))
        return false;
    size_t n = json_object_array_length(subs);
    for (size_t i = 0; i < n; i++) {
        json_object *s = json_object_array_get_idx(subs, i);
        int64_t start = int_field(s, "start");
        int64_t end = int_field(s, "end");
        if (start < 0 || end < start || (uint64_t)end > text_len ||
            end > UINT32_MAX)
            continue;
        if (search__span_push(p, (uint32_t)start, (uint32_t)end) != 0)
            return false;
    }
    return true;
}

static bool rg_match(search_parser *p, json_object *data)
{
    json_object *path, *lines;
    search_found f = { .has_spans = true };
    if (!json_object_object_get_ex(data, "path", &path) ||
        !json_object_object_get_ex(data, "lines", &lines) ||
        !rg_data(path, &p->path, &f.path, &f.path_len) ||
        !rg_data(lines, &p->text, &f.text, &f.text_len)) {
        p->stats.skipped_records++;
        return true;
    }
    if (f.text_len > 0 && f.text[f.text_len - 1] == '\n')
        f.text_len--;
    int64_t line = int_field(data, "line_number");
    f.line = line > 0 ? (uint64_t)line : 0;
    p->n_spans = 0;
    if (!rg_spans(p, data, f.text_len))
        p->n_spans = 0;
    if (p->n_spans > 0) /* rg's, even when the kept text ends before it */
        f.column = p->spans[0].start + 1;
    return search__add(p, &f);
}

bool search__rg_record(search_parser *p, const char *data, size_t len, bool cut)
{
    if (cut || len > INT32_MAX) { /* a prefix of JSON is no JSON */
        p->stats.skipped_records++;
        return true;
    }
    json_tokener_reset(p->tok);
    json_object *o = json_tokener_parse_ex(p->tok, data, (int)len);
    json_object *type, *body;
    bool more = true;
    if (o == NULL || !json_object_object_get_ex(o, "type", &type) ||
        !json_object_object_get_ex(o, "data", &body) ||
        !json_object_is_type(type, json_type_string)) {
        p->stats.skipped_records++;
    } else if (strcmp(json_object_get_string(type), "match") == 0) {
        more = rg_match(p, body);
    }
    json_object_put(o);
    return more;
}
