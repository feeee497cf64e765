/* tunedb_migrate.c - schema-1 tuning databases read into typed rows (tunedb_migrate.h). */
#include "tune/tunedb_migrate.h"

#include "core/report.h"
#include "engine/family.h"
#include "kernels/families.h"
#include "tune/tunedb_key.h"
#include "tune/tunedb_sql.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kb_tunedb_is_v1(sqlite3 *h)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(h, "SELECT name FROM pragma_table_info('tune_entries') WHERE name = 'params'", -1, &s,
                           NULL) != SQLITE_OK)
        return -1;
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

int kb_tunedb_v1_problem(const char *key, kb_tune_problem_desc *out)
{
    memset(out, 0, sizeof *out);
    char buf[512];
    snprintf(buf, sizeof buf, "%s", key);
    char *seg[6], *save = NULL;
    int n = 0;
    for (char *t = strtok_r(buf, "/", &save); t && n < 6; t = strtok_r(NULL, "/", &save))
        seg[n++] = t;
    if (n != 5 || strncmp(seg[3], "pad", 3) != 0 || strlen(seg[0]) >= sizeof out->op)
        return -1;
    snprintf(out->op, sizeof out->op, "%s", seg[0]);
    snprintf(out->family, sizeof out->family, "%.*s", (int)strcspn(seg[0], "("), seg[0]);
    snprintf(out->dtype, sizeof out->dtype, "%s", seg[1]);
    for (char *d = seg[2]; *d; out->n_dims++) {
        char *end;
        long long v = strtoll(d, &end, 10);
        if (end == d || v < 1 || out->n_dims == KB_MAX_DIMS || (*end && *end != 'x'))
            return -1;
        out->dims[out->n_dims] = v;
        d = *end == 'x' ? end + 1 : end;
    }
    char *end;
    long pad = strtol(seg[3] + 3, &end, 10);
    if (*end || end == seg[3] + 3)
        return -1;
    out->pad = (int)pad;
    snprintf(out->launch, sizeof out->launch, "%s", seg[4]);
    return out->n_dims > 0 ? 0 : -1;
}

/* Param name of family fam (NULL: unknown) with value v into p: a choice param's name of
 * the value looked up. */
static void one_param(const kb_family *fam, const char *name, long long v, kb_tune_param *p)
{
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    p->value = v;
    int i = fam ? kb_family_param_find(fam, name) : -1;
    const char *const *ch = i >= 0 ? fam->params[i].choices : NULL;
    for (long long k = 0; ch && ch[k]; k++)
        if (k == v)
            snprintf(p->choice, sizeof p->choice, "%s", ch[k]);
}

/* The position of param name in family fam (unknown family or name: after the known). */
static int order_of(const kb_family *fam, const char *name)
{
    int i = fam ? kb_family_param_find(fam, name) : -1;
    return i >= 0 ? i : KB_MAX_PARAMS;
}

int kb_tunedb_v1_params(const char *json, const char *family, kb_tune_config_desc *out)
{
    memset(out, 0, sizeof *out);
    json_t *o = json_loads(json, 0, NULL);
    const char *variant = json_string_value(json_object_get(o, "variant"));
    int fi = kb_family_find(family);
    const kb_family *fam = fi >= 0 ? kb_families[fi] : NULL;
    int ok = json_is_object(o) && variant;
    if (ok)
        snprintf(out->variant, sizeof out->variant, "%s", variant);
    const char *name;
    json_t *v;
    json_object_foreach(o, name, v) {
        if (!ok || !strcmp(name, "variant"))
            continue;
        ok = json_is_integer(v) && out->n_params < KB_MAX_PARAMS && strlen(name) < sizeof out->params[0].name;
        if (!ok)
            break;
        /* in the family's order (insertion sort: a configuration has few params) */
        int at = out->n_params++;
        while (at > 0 && order_of(fam, out->params[at - 1].name) > order_of(fam, name)) {
            out->params[at] = out->params[at - 1];
            at--;
        }
        one_param(fam, name, (long long)json_integer_value(v), &out->params[at]);
    }
    json_decref(o);
    return ok ? 0 : -1;
}

/* ---- the rows ---- */

/* The next column's text ("" for NULL). */
static const char *c_text(kb_tsql *c)
{
    const unsigned char *t = sqlite3_column_text(c->s, c->i++);
    return t ? (const char *)t : "";
}

/* The key columns (silicon, driver, toolchain, source) into k and source. */
static void read_key(kb_tsql *c, kb_tune_key *k, char *source, size_t n)
{
    memset(k, 0, sizeof *k);
    snprintf(k->silicon, sizeof k->silicon, "%s", c_text(c));
    snprintf(k->driver, sizeof k->driver, "%s", c_text(c));
    snprintf(k->toolchain, sizeof k->toolchain, "%s", c_text(c));
    snprintf(source, n, "%s", c_text(c));
}

/* device, sm, sm_count, emulator into k (the emulator re-keyed), time into when. */
static void read_where(kb_tsql *c, kb_tune_key *k, char *when, size_t n)
{
    snprintf(k->device, sizeof k->device, "%s", c_text(c));
    k->sm = (int)kb_tsql_get_int(c);
    k->arch = k->sm;
    k->sm_count = (int)kb_tsql_get_int(c);
    k->emulator = (int)kb_tsql_get_int(c);
    snprintf(when, n, "%s", c_text(c));
    if (k->emulator)
        kb_tune_key_to_emulator(k);
}

/* The problem key and params text of a row into prob and cfg; KB_ERR_INPUT naming the row. */
static kb_status convert(const char *table, long long row, const char *problem, const char *params,
                         const char *family, kb_tune_problem_desc *prob, kb_tune_config_desc *cfg, kb_sb *err)
{
    if (kb_tunedb_v1_problem(problem, prob) != 0) {
        kb_sb_printf(err, "%s row %lld: problem key '%s' is not family(params)/dtype/dims/padN/launch", table, row,
                     problem);
        return KB_ERR_INPUT;
    }
    if (kb_tunedb_v1_params(params, family, cfg) != 0) {
        kb_sb_printf(err, "%s row %lld: params '%s' are not a JSON object of a variant and at most %d integer "
                     "params", table, row, params, KB_MAX_PARAMS);
        return KB_ERR_INPUT;
    }
    return KB_OK;
}

static kb_status read_entries(sqlite3 *h, const kb_tunedb_v1_sink *sink, int *n, kb_sb *err)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(h, "SELECT rowid, silicon, driver, toolchain, source, case_id, problem, config, params, "
                           "family, status, reason, median_us, noise, samples, registers, shmem_bytes, clock, device, "
                           "sm, sm_count, emulator, time FROM tune_entries_v1 ORDER BY rowid", -1, &s, NULL) != SQLITE_OK) {
        kb_sb_printf(err, "tune_entries: %s", sqlite3_errmsg(h));
        return KB_ERR_INPUT;
    }
    kb_tune_entry *e = calloc(1, sizeof *e);
    kb_status st = e ? KB_OK : KB_ERR_OOM;
    while (st == KB_OK && sqlite3_step(s) == SQLITE_ROW) {
        kb_tsql c = { s, 0 };
        long long row = kb_tsql_get_int(&c);
        kb_tune_key k;
        char source[64], params[1024];
        memset(e, 0, sizeof *e);
        read_key(&c, &k, source, sizeof source);
        snprintf(e->case_id, sizeof e->case_id, "%s", c_text(&c));
        snprintf(e->problem, sizeof e->problem, "%s", c_text(&c));
        snprintf(e->config, sizeof e->config, "%s", c_text(&c));
        snprintf(params, sizeof params, "%s", c_text(&c));
        snprintf(e->family, sizeof e->family, "%s", c_text(&c));
        snprintf(e->status, sizeof e->status, "%s", c_text(&c));
        snprintf(e->reason, sizeof e->reason, "%s", c_text(&c));
        e->median_us = kb_tsql_get_real(&c);
        e->noise = kb_tsql_get_real(&c);
        e->samples = (int)kb_tsql_get_int(&c);
        e->registers = kb_tsql_get_int_or(&c, -1);
        e->shmem_bytes = kb_tsql_get_int_or(&c, -1);
        snprintf(e->clock, sizeof e->clock, "%s", c_text(&c));
        read_where(&c, &k, e->time, sizeof e->time);
        st = convert("tune_entries", row, e->problem, params, e->family, &e->prob, &e->cfg, err);
        if (st == KB_OK && (st = sink->entry(sink->user, &k, source, e, err)) == KB_OK)
            (*n)++;
    }
    if (!e)
        kb_sb_printf(err, "out of memory");
    free(e);
    sqlite3_finalize(s);
    return st;
}

static kb_status read_choices(sqlite3 *h, const kb_tunedb_v1_sink *sink, int *n, kb_sb *err)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(h, "SELECT rowid, silicon, driver, toolchain, source, problem, family, case_id, config, "
                           "params, median_us, lo_us, hi_us, verdict, tied, strategy, evaluations, space, n_tied, "
                           "stale, device, sm, sm_count, emulator, time FROM tune_choices_v1 ORDER BY rowid", -1, &s,
                           NULL) != SQLITE_OK) {
        kb_sb_printf(err, "tune_choices: %s", sqlite3_errmsg(h));
        return KB_ERR_INPUT;
    }
    kb_tune_choice_row *ch = calloc(1, sizeof *ch);
    kb_status st = ch ? KB_OK : KB_ERR_OOM;
    while (st == KB_OK && sqlite3_step(s) == SQLITE_ROW) {
        kb_tsql c = { s, 0 };
        long long row = kb_tsql_get_int(&c);
        char params[1024];
        memset(ch, 0, sizeof *ch);
        read_key(&c, &ch->key, ch->source, sizeof ch->source);
        snprintf(ch->problem, sizeof ch->problem, "%s", c_text(&c));
        snprintf(ch->family, sizeof ch->family, "%s", c_text(&c));
        snprintf(ch->case_id, sizeof ch->case_id, "%s", c_text(&c));
        snprintf(ch->config, sizeof ch->config, "%s", c_text(&c));
        snprintf(params, sizeof params, "%s", c_text(&c));
        ch->median_us = kb_tsql_get_real(&c);
        ch->lo_us = kb_tsql_get_real(&c);
        ch->hi_us = kb_tsql_get_real(&c);
        const char *verdict = c_text(&c);
        ch->tie = !strcmp(verdict, "tie");
        ch->noisy = !strcmp(verdict, "noise");   /* a schema-1 file of the tuner branch (issue 24) */
        snprintf(ch->tied, sizeof ch->tied, "%s", c_text(&c));
        snprintf(ch->strategy, sizeof ch->strategy, "%s", c_text(&c));
        ch->evaluations = (int)kb_tsql_get_int(&c);
        ch->space = (int)kb_tsql_get_int(&c);
        ch->n_tied = (int)kb_tsql_get_int(&c);
        int stale = (int)kb_tsql_get_int(&c);
        read_where(&c, &ch->key, ch->time, sizeof ch->time);
        st = convert("tune_choices", row, ch->problem, params, ch->family, &ch->prob, &ch->cfg, err);
        if (st == KB_OK && (st = sink->choice(sink->user, &ch->key, ch->source, ch, stale, err)) == KB_OK)
            (*n)++;
    }
    if (!ch)
        kb_sb_printf(err, "out of memory");
    free(ch);
    sqlite3_finalize(s);
    return st;
}

kb_status kb_tunedb_v1_read(sqlite3 *h, const kb_tunedb_v1_sink *sink, int *n_entries, int *n_choices, kb_sb *err)
{
    *n_entries = *n_choices = 0;
    kb_status st = read_entries(h, sink, n_entries, err);
    return st == KB_OK ? read_choices(h, sink, n_choices, err) : st;
}

int kb_tunedb_is_v2(sqlite3 *h)
{
    static const char *const probes[] = { "SELECT variant, arch, cpu_timing, dim0 FROM tune_entries LIMIT 0",
                                          "SELECT name, value, choice FROM tune_params LIMIT 0",
                                          "SELECT variant, arch, stale FROM tune_choices LIMIT 0" };
    int ok = 1;
    for (size_t i = 0; i < sizeof probes / sizeof probes[0] && ok; i++) {
        sqlite3_stmt *s;
        ok = sqlite3_prepare_v2(h, probes[i], -1, &s, NULL) == SQLITE_OK;
        sqlite3_finalize(s);
    }
    return ok;
}

kb_status kb_tunedb_v1_migrate(sqlite3 *h, const char *schema, const kb_tunedb_v1_sink *sink, const char *path,
                               const char *where, kb_sb *err)
{
    if (sqlite3_exec(h, "BEGIN IMMEDIATE; ALTER TABLE tune_entries RENAME TO tune_entries_v1; "
                     "ALTER TABLE tune_choices RENAME TO tune_choices_v1;", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(h, schema, NULL, NULL, NULL) != SQLITE_OK) {
        kb_sb_printf(err, "%s: cannot migrate it from schema 1: %s", path, sqlite3_errmsg(h));
        sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
        return KB_ERR_IO;
    }
    int n_entries = 0, n_choices = 0;
    kb_sb why;
    kb_sb_init(&why);
    kb_status st = kb_tunedb_v1_read(h, sink, &n_entries, &n_choices, &why);
    if (st == KB_OK &&
        sqlite3_exec(h, "DROP TABLE tune_entries_v1; DROP TABLE tune_choices_v1; COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        kb_sb_printf(&why, "commit: %s", sqlite3_errmsg(h));
        st = KB_ERR_IO;
    }
    if (st != KB_OK) {
        sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
        kb_sb_printf(err, "%s: a tuning database of schema 1 that cannot be migrated, left as it was: %s", path,
                     why.s);
    } else {
        kb_report(KB_REPORT_INFO, "%s: migrated from schema 1 (params as JSON text, the emulator keyed as its "
                  "target GPU) to schema 2 %s: %d entries, %d choices; emulator rows now carry the emulator's "
                  "identity (sm 0, cpu_timing 1)", path, where, n_entries, n_choices);
    }
    kb_sb_free(&why);
    return st == KB_OK ? KB_OK : KB_ERR_INPUT;
}
