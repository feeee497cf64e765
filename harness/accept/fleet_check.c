/* fleet_check.c - a rank's verdict file checked before the merge (see fleet_check.h). */
#include "accept/fleet_check.h"

#include "accept/verdict.h"

#include <stdio.h>

#include <math.h>
#include <string.h>

#define MAX_TEXT 256
#define MAX_VALUE 1e12

/* An integer field in [lo, hi] (required, or null/absent allowed when !need). */
static kb_status int_in(json_t *o, const char *block, const char *key, long long lo, long long hi, int need,
                        kb_sb *why)
{
    json_t *v = json_object_get(o, key);
    if (!need && (!v || json_is_null(v)))
        return KB_OK;
    if (json_is_integer(v) && json_integer_value(v) >= lo && json_integer_value(v) <= hi)
        return KB_OK;
    kb_sb_printf(why, "%s.%s: not an integer in [%lld, %lld]", block, key, lo, hi);
    return KB_ERR_INPUT;
}

/* A number field: null/absent, or finite in [lo, hi]. */
static kb_status num_in(json_t *o, const char *block, const char *key, double lo, double hi, kb_sb *why)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return KB_OK;
    double x = json_is_number(v) ? json_number_value(v) : NAN;
    if (isfinite(x) && x >= lo && x <= hi)
        return KB_OK;
    kb_sb_printf(why, "%s.%s: not a number in [%g, %g]", block, key, lo, hi);
    return KB_ERR_INPUT;
}

/* String fields of o: absent, null or strings of at most max bytes. */
static kb_status texts(json_t *o, const char *block, const char *const *keys, size_t max, kb_sb *why)
{
    for (int i = 0; keys[i]; i++) {
        json_t *v = json_object_get(o, keys[i]);
        if (!v || json_is_null(v))
            continue;
        if (!json_is_string(v) || json_string_length(v) > max) {
            kb_sb_printf(why, "%s.%s: %s", block, keys[i], json_is_string(v) ? "longer than the 256 bytes allowed"
                                                                              : "not a string");
            return KB_ERR_INPUT;
        }
    }
    return KB_OK;
}

static kb_status check_identity(json_t *id, kb_sb *why)
{
    static const char *const keys[] = { "launcher", "job_id", "step_id", "host", "cuda_visible_devices", NULL };
    const long long top = 2147483647;
    if (int_in(id, "identity", "rank", 0, top, 1, why) || int_in(id, "identity", "world_size", 0, top, 1, why) ||
        int_in(id, "identity", "local_rank", -1, top, 0, why) || int_in(id, "identity", "node_id", -1, top, 0, why) ||
        texts(id, "identity", keys, MAX_TEXT, why))
        return KB_ERR_INPUT;
    long long rank = json_integer_value(json_object_get(id, "rank"));
    long long world = json_integer_value(json_object_get(id, "world_size"));
    if (world > 0 && rank >= world) {
        kb_sb_printf(why, "identity.rank: %lld is not below its world_size %lld", rank, world);
        return KB_ERR_INPUT;
    }
    return KB_OK;
}

static kb_status check_test(json_t *t, size_t i, kb_sb *why)
{
    char block[32];
    snprintf(block, sizeof block, "tests[%zu]", i);
    static const char *const keys[] = { "unit", "comparison", "source", "reason", "case", NULL };
    json_t *name = json_object_get(t, "name"), *clock = json_object_get(t, "clock");
    if (!json_is_object(t) || !json_is_string(name) || json_string_length(name) > 64) {
        kb_sb_printf(why, "%s: not a test (an object with a name of at most 64 bytes)", block);
        return KB_ERR_INPUT;
    }
    const char *status = json_string_value(json_object_get(t, "status"));
    if (!status || kb_acc_status_parse(status) < 0) {
        kb_sb_printf(why, "%s.status: not PASS, WARN, FAIL or SKIP", block);
        return KB_ERR_INPUT;
    }
    if (clock && !json_is_null(clock) && (!json_is_string(clock) || json_string_length(clock) > 8)) {
        kb_sb_printf(why, "%s.clock: not a clock name", block);
        return KB_ERR_INPUT;
    }
    if (num_in(t, block, "value", 0, MAX_VALUE, why) || num_in(t, block, "threshold", 0, MAX_VALUE, why) ||
        num_in(t, block, "reference", 0, MAX_VALUE, why) || num_in(t, block, "fraction", 0, 100, why) ||
        texts(t, block, keys, 4096, why))
        return KB_ERR_INPUT;
    return KB_OK;
}

kb_status kb_fleet_check_verdict(json_t *v, kb_sb *why)
{
    static const char *const gpu_keys[] = { "name", "uuid", "pci_bus_id", NULL };
    static const char *const spec_keys[] = { "name", "sku", "file", NULL };
    json_t *spec = json_object_get(v, "spec"), *tests = json_object_get(v, "tests");
    if (check_identity(json_object_get(v, "identity"), why) || texts(json_object_get(v, "gpu"), "gpu", gpu_keys,
                                                                     MAX_TEXT, why))
        return KB_ERR_INPUT;
    if (spec && !json_is_null(spec) && (!json_is_object(spec) || texts(spec, "spec", spec_keys, MAX_TEXT, why))) {
        if (!json_is_object(spec))
            kb_sb_printf(why, "spec: not an object");
        return KB_ERR_INPUT;
    }
    if (json_array_size(tests) > 64) {
        kb_sb_printf(why, "tests: %zu of them, more than the 64 a verdict may have", json_array_size(tests));
        return KB_ERR_INPUT;
    }
    size_t i;
    json_t *t;
    json_array_foreach(tests, i, t)
        if (check_test(t, i, why) != KB_OK)
            return KB_ERR_INPUT;
    return int_in(v, "verdict", "exit_code", 0, 255, 0, why);
}
