/* tune_v1.h - a tuning database of schema 1 (kbench before issue 20), written the way that
 * kbench wrote it, for the migration tests (tests/test_tunedb.c, tests/test_tune_cli.c). */
#ifndef KB_TEST_TUNE_V1_H
#define KB_TEST_TUNE_V1_H

#include <sqlite3.h>
#include <stdio.h>

/* Schema 1's tables, as harness/tune/tunedb.c created them up to issue 20. */
static const char tune_v1_schema[] =
    "CREATE TABLE tune_entries(silicon TEXT NOT NULL, driver TEXT NOT NULL, toolchain TEXT NOT NULL, "
    "source TEXT NOT NULL, case_id TEXT NOT NULL, problem TEXT, config TEXT, params TEXT, family TEXT, status TEXT, "
    "reason TEXT, median_us REAL, noise REAL, samples INTEGER, registers INTEGER, shmem_bytes INTEGER, clock TEXT, "
    "device TEXT, sm INTEGER, sm_count INTEGER, emulator INTEGER, time TEXT, "
    "PRIMARY KEY(silicon, driver, toolchain, source, case_id));"
    "CREATE TABLE tune_choices(silicon TEXT NOT NULL, driver TEXT NOT NULL, toolchain TEXT NOT NULL, "
    "source TEXT NOT NULL, problem TEXT NOT NULL, family TEXT, case_id TEXT, config TEXT, params TEXT, median_us REAL, "
    "lo_us REAL, hi_us REAL, verdict TEXT, tied TEXT, strategy TEXT, evaluations INTEGER, space INTEGER, device TEXT, "
    "sm INTEGER, sm_count INTEGER, emulator INTEGER, time TEXT, n_tied INTEGER, stale INTEGER NOT NULL DEFAULT 0, "
    "PRIMARY KEY(silicon, driver, toolchain, source, problem));";

#define TUNE_V1_SILICON "kbench CPU emulator (Test CPU)|sm_90|2 SMs|1024 MiB|L2 0 KiB|0 MHz"
#define TUNE_V1_PROBLEM "gemm(layout=nt,alpha=1,beta=0)/fp16/64x64x64/pad0/eager"
#define TUNE_V1_CASE "gemm/cublaslt(layout=nt,algo=3,search=enumerate)/fp16/64x64x64/pad0/eager"

/* The params text of the v1 rows: the variant, cuBLASLt's choice param `search` at index 1
 * (enumerate), and 16 more integers - 20 keys, more than schema 1's export took (17). */
static void tune_v1_params(char *out, size_t n)
{
    int k = snprintf(out, n, "{\"variant\":\"cublaslt\",\"algo\":3,\"workspace\":32,\"search\":1,\"budget\":64");
    for (int i = 0; i < 16 && k > 0 && (size_t)k < n; i++)
        k += snprintf(out + k, n - (size_t)k, ",\"X%d\":%d", i, 100 + i);
    if (k > 0 && (size_t)k < n)
        snprintf(out + k, n - (size_t)k, "}");
}

/* Write a schema-1 database at path: one emulator entry and its choice (keyed sm_90, as
 * schema 1 keyed the emulator), the choice's problem key replaced by problem. 0, or -1. */
static int tune_v1_write(const char *path, const char *problem)
{
    sqlite3 *h;
    char params[1024], sql[4096];
    tune_v1_params(params, sizeof params);
    if (sqlite3_open(path, &h) != SQLITE_OK)
        return -1;
    snprintf(sql, sizeof sql,
             "%s INSERT INTO tune_entries VALUES('" TUNE_V1_SILICON "', 'none', 'c++ 12', 'srcv1', '" TUNE_V1_CASE
             "', '" TUNE_V1_PROBLEM "', 'cublaslt(algo=3)', '%s', 'gemm', 'ok', '', 21.5, 0.01, 5, NULL, NULL, 'cpu', "
             "'kbench CPU emulator (Test CPU)', 90, 2, 1, '2026-11-01T00:00:00Z');"
             "INSERT INTO tune_choices VALUES('" TUNE_V1_SILICON "', 'none', 'c++ 12', 'srcv1', '%s', 'gemm', '"
             TUNE_V1_CASE "', 'cublaslt(algo=3)', '%s', 21.5, 20.0, 23.0, 'clear', '', 'brute', 1, 1, "
             "'kbench CPU emulator (Test CPU)', 90, 2, 1, '2026-11-01T00:00:00Z', 0, 0);",
             tune_v1_schema, params, problem, params);
    int rc = sqlite3_exec(h, sql, NULL, NULL, NULL);
    sqlite3_close(h);
    return rc == SQLITE_OK ? 0 : -1;
}

#endif /* KB_TEST_TUNE_V1_H */
