/* record_check.c - the numbers of a record checked as it is read (see record_check.h). */
#include "results/record_check.h"

#include "results/record_json.h"

#include <math.h>
#include <string.h>

/* One numeric field: where it is (block NULL: the record itself), its range, and whether
 * it must be an integer. */
typedef struct {
    const char *block, *key;
    double lo, hi;
    int integer;
} num_rule;

#define MAX_US 1e15      /* [us] 31 years */
#define MAX_MS 1e12      /* [ms] */
#define MAX_WORK 1e30    /* [flops, bytes] */
#define MAX_COUNT 4611686018427387904.0   /* 2^62 */

static const num_rule rules[] = {
    { NULL, "schema_version", 1, KB_RECORD_SCHEMA_VERSION, 1 },
    { NULL, "pad", 0, 4096, 1 },
    { NULL, "wall_ms", 0, MAX_MS, 0 },
    { NULL, "compile_ms", 0, MAX_MS, 0 },
    { "timing", "median_us", 0, MAX_US, 0 },
    { "timing", "mean_us", 0, MAX_US, 0 },
    { "timing", "min_us", 0, MAX_US, 0 },
    { "timing", "max_us", 0, MAX_US, 0 },
    { "timing", "p10_us", 0, MAX_US, 0 },
    { "timing", "p90_us", 0, MAX_US, 0 },
    { "timing", "cv", 0, 1e6, 0 },
    { "timing", "samples", 0, 1e9, 1 },
    { "work", "flops", 0, MAX_WORK, 0 },
    { "work", "bytes_read", 0, MAX_WORK, 0 },
    { "work", "bytes_written", 0, MAX_WORK, 0 },
    { "work", "bytes_moved", 0, MAX_WORK, 0 },
    { "verify", "n", 0, MAX_COUNT, 1 },
    { "verify", "n_bad", 0, MAX_COUNT, 1 },
};

/* v (named block.key) against [lo, hi]; null passes. */
static kb_status check_value(json_t *v, const char *block, const char *key, double lo, double hi, int integer,
                             kb_sb *why)
{
    if (!v || json_is_null(v))
        return KB_OK;
    double x = json_is_number(v) ? json_number_value(v) : NAN;
    int ok = json_is_number(v) && isfinite(x) && x >= lo && x <= hi && (!integer || x == floor(x));
    if (ok)
        return KB_OK;
    char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    kb_sb_printf(why, "%s%s%s: %.40s%s is not %s in [%.17g, %.17g]", block ? block : "", block ? "." : "", key,
                 text ? text : "?", text && strlen(text) > 40 ? "..." : "", integer ? "an integer" : "a number", lo, hi);
    free(text);
    return KB_ERR_INPUT;
}

/* Every entry of the array block.key is a time in [0, MAX_US]. */
static kb_status check_times(json_t *block, const char *name, const char *key, kb_sb *why)
{
    json_t *a = json_object_get(block, key);
    if (!a || json_is_null(a))
        return KB_OK;
    if (!json_is_array(a)) {
        kb_sb_printf(why, "%s.%s: not an array of times", name, key);
        return KB_ERR_INPUT;
    }
    size_t i;
    json_t *v;
    char label[64];
    json_array_foreach(a, i, v) {
        snprintf(label, sizeof label, "%s[%zu]", key, i);
        if (check_value(v, name, label, 0, MAX_US, 0, why) != KB_OK)
            return KB_ERR_INPUT;
    }
    return KB_OK;
}

/* Every value of the object block (dims, stage_ms) in [lo, hi]. */
static kb_status check_members(json_t *rec, const char *name, double lo, double hi, int integer, int max_n,
                               kb_sb *why)
{
    json_t *o = json_object_get(rec, name);
    if (!o || json_is_null(o))
        return KB_OK;
    if (!json_is_object(o) || (max_n && (int)json_object_size(o) > max_n)) {
        kb_sb_printf(why, "%s: %s", name, json_is_object(o) ? "too many members" : "not an object");
        return KB_ERR_INPUT;
    }
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v)
        if (check_value(v, name, k, lo, hi, integer, why) != KB_OK)
            return KB_ERR_INPUT;
    return KB_OK;
}

kb_status kb_record_check(json_t *rec, kb_sb *why)
{
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        const num_rule *r = &rules[i];
        json_t *b = r->block ? json_object_get(rec, r->block) : rec;
        if (r->block && b && !json_is_null(b) && !json_is_object(b)) {
            kb_sb_printf(why, "%s: not an object", r->block);
            return KB_ERR_INPUT;
        }
        if (check_value(json_object_get(b, r->key), r->block, r->key, r->lo, r->hi, r->integer, why) != KB_OK)
            return KB_ERR_INPUT;
    }
    json_t *timing = json_object_get(rec, "timing");
    if (check_times(timing, "timing", "samples_us", why) != KB_OK ||
        check_times(timing, "timing", "samples_start_us", why) != KB_OK)
        return KB_ERR_INPUT;
    if (check_members(rec, "dims", 1, 1099511627776.0, 1, 16, why) != KB_OK)   /* 2^40, as a suite's */
        return KB_ERR_INPUT;
    return check_members(rec, "stage_ms", 0, MAX_MS, 0, 0, why);
}
