/* test_est_store.c - `kbench estimate`'s measured ceilings (harness/estimate/est_store.h,
 * est_cmd.h kb_est_setup_target): the store keys ceilings by device name and UUID, the
 * estimate models a GPU it has not got, so it takes the GPU-timed ceilings of the store's
 * device that data/peaks.json matches to the same SKU as --gpu, the one measured last, and
 * says which device and when; otherwise the datasheet x fraction, "assumed". Emulator
 * (CPU-timed) ceilings are never taken. The devices and figures are synthetic test inputs
 * in a temporary store, not measurements. */
#include "check.h"
#include "estimate/est_cmd.h"
#include "estimate/est_store.h"
#include "results/store.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PEAKS_FILE "data/peaks.json" /* tests run from the repository root */

static char dir[] = "/tmp/kb_test_est_store_XXXXXX";
static char db_path[256];

/* A ceiling-family record of device dev (uuid) timed on clock: copy at gbps, or launch at median_us. */
static json_t *ceiling(const char *dev, const char *uuid, int sm, const char *clock, const char *variant, double gbps,
                       double median_us, const char *run, const char *time)
{
    static int seq;
    char id[96];
    snprintf(id, sizeof id, "ceiling/%s()/fp32/case%d", variant, seq++);
    return json_pack("{ss ss ss ss ss ss s{} s{ss ss ss si sb} ss s{ss sf} s{sf sf sf sf}}", "run_id", run, "time",
                     time, "case_id", id, "family", "ceiling", "variant", variant, "dtype", "fp32", "params", "device",
                     "name", dev, "uuid", uuid, "pci_bus_id", "", "sm", sm, "emulator", strcmp(clock, "gpu") != 0,
                     "status", "ok", "timing", "clock", clock, "median_us", median_us, "derived", "tflops", 0.0, "gbps",
                     gbps, "ai", 0.0, "pct_roof", 0.0);
}

static void put(kb_store *s, json_t *rec)
{
    kb_sb err;
    kb_sb_init(&err);
    CHECK_MSG(rec && kb_store_put(s, rec, "test", &err) == KB_OK, "%s", err.s);
    kb_sb_free(&err);
    json_decref(rec);
}

static void make_store(void)
{
    kb_store *s;
    CHECK(kb_store_open(db_path, &s, NULL) == KB_OK);
    /* two H100 SXM boards (the name NVML gives them), the second measured later; an A100;
     * the emulator's CPU figures (never ceilings of a GPU) */
    put(s, ceiling("NVIDIA H100 80GB HBM3", "GPU-old", 90, "gpu", "copy", 2700, 10, "r-old", "2026-01-01T00:00:00Z"));
    put(s, ceiling("NVIDIA H100 80GB HBM3", "GPU-new", 90, "gpu", "copy", 2850, 10, "r-new", "2026-02-01T00:00:00Z"));
    put(s, ceiling("NVIDIA H100 80GB HBM3", "GPU-new", 90, "gpu", "launch", 0, 2.5, "r-new", "2026-02-01T00:00:00Z"));
    put(s, ceiling("NVIDIA A100-SXM4-80GB", "GPU-a", 80, "gpu", "copy", 1800, 10, "r-a", "2026-01-15T00:00:00Z"));
    put(s, ceiling("kbench CPU emulator", "emu", 90, "cpu", "copy", 9999, 10, "r-emu", "2026-03-01T00:00:00Z"));
    kb_store_close(s);
}

static void test_same_sku_latest_device(void)
{
    kb_est_setup s;
    kb_sb err;
    kb_sb_init(&err);
    CHECK_MSG(kb_est_setup_target("h100-sxm", PEAKS_FILE, db_path, &s, &err) == KB_OK, "%s", err.s);
    /* GPU-new's copy (measured last), not GPU-old's, nor the emulator's 9999 */
    CHECK_MSG(s.x.dram_gbps == 2850 && strcmp(s.x.dram_source, "measured ceiling") == 0, "%.0f %s", s.x.dram_gbps,
              s.x.dram_source);
    CHECK(fabs(s.x.launch_us[0] - 2.5) < 1e-12 && strcmp(s.x.launch_source, "measured ceiling") == 0);
    CHECK_MSG(strstr(s.ceilings_note, "NVIDIA H100 80GB HBM3") && strstr(s.ceilings_note, "GPU-new") &&
                  strstr(s.ceilings_note, "r-new") && strstr(s.ceilings_note, "2026-02-01"),
              "%s", s.ceilings_note);
    /* the A100 of the store for a100-sxm */
    CHECK(kb_est_setup_target("a100-sxm", PEAKS_FILE, db_path, &s, &err) == KB_OK);
    CHECK(s.x.dram_gbps == 1800 && strstr(s.ceilings_note, "GPU-a") && strcmp(s.x.launch_source, "assumed") == 0);
    kb_sb_free(&err);
}

static void test_no_ceilings_assumed(void)
{
    kb_est_setup s;
    kb_sb err;
    kb_sb_init(&err);
    /* no L4 in the store: the datasheet x the published copy's fraction, said to be assumed */
    CHECK(kb_est_setup_target("l4", PEAKS_FILE, db_path, &s, &err) == KB_OK);
    CHECK(fabs(s.x.dram_gbps - 300 * 2900.0 / 3350) < 1e-9 && strstr(s.x.dram_source, "assumed") &&
          s.ceilings_note[0] == 0 && strcmp(s.x.launch_source, "assumed") == 0);
    /* no store at all, and none asked for */
    CHECK(kb_est_setup_target("h100-sxm", PEAKS_FILE, "/nonexistent/kbench.db", &s, &err) == KB_OK);
    CHECK(fabs(s.x.dram_gbps - 2900) < 1e-9 && s.ceilings_note[0] == 0);
    CHECK(kb_est_setup_target("h100-sxm", PEAKS_FILE, NULL, &s, &err) == KB_OK && s.ceilings_note[0] == 0);
    kb_peaks p;
    char note[64] = "x";
    CHECK(kb_est_gpu_peaks(kb_est_gpu_find("h100-sxm"), PEAKS_FILE, &p, &err) == KB_OK);
    CHECK(kb_est_store_ceilings(NULL, PEAKS_FILE, &p, note, sizeof note) == 0 && note[0] == 0);
    /* an unknown GPU is an input error naming the choices */
    kb_sb_clear(&err);
    CHECK(kb_est_setup_target("h900", PEAKS_FILE, db_path, &s, &err) == KB_ERR_INPUT && strstr(err.s, "h100-sxm"));
    kb_sb_free(&err);
}

int main(void)
{
    CHECK(mkdtemp(dir) != NULL);
    snprintf(db_path, sizeof db_path, "%s/kbench.db", dir);
    make_store();
    RUN(test_same_sku_latest_device);
    RUN(test_no_ceilings_assumed);
    unlink(db_path);
    rmdir(dir);
    TEST_MAIN_END();
}
