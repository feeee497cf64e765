/* gpu.c - the GPUs and architectures of `kbench estimate` (see gpu.h, docs/estimate.md). */
#include "estimate/gpu.h"

#include <stdio.h>
#include <string.h>

#define GUIDE "CUDA C++ Programming Guide, Compute Capabilities: technical specifications per compute capability"
#define L2_A100 "L2 5120 bytes/clk: NVIDIA A100 Tensor Core GPU Architecture whitepaper"

/* Limits per architecture (GUIDE). Shared memory per SM usable by blocks: 164 KiB (8.0),
 * 100 KiB (8.6, 8.9), 228 KiB (9.0), 1 KiB of it reserved per block. 32 banks of 4 bytes
 * per clock on every one of them. The L2 and latency figures are ASSUMPTIONS (gpu.h). */
static const kb_est_arch arches[] = {
    { 80, 2048, 32, 65536, 164 * 1024, 1024, 128, 4, 5120.0, 300.0, 600.0, GUIDE "; " L2_A100,
      "latencies 300 ns (L2 hit) and 600 ns (DRAM, loaded) are round assumptions, not measurements" },
    { 89, 1536, 24, 65536, 100 * 1024, 1024, 128, 4, 5120.0, 300.0, 600.0, GUIDE,
      "ASSUMED: L2 5120 bytes/clk as A100 (Ada publishes none); latencies 300/600 ns" },
    { 90, 2048, 32, 65536, 228 * 1024, 1024, 128, 4, 5120.0, 300.0, 600.0, GUIDE,
      "ASSUMED: L2 5120 bytes/clk as A100 (Hopper publishes none); latencies 300/600 ns" },
    /* Blackwell: the guide's limits (10.x as 9.0; 12.x 1536 threads, 24 blocks, 100 KiB);
     * no bandwidth or latency of these is published: the Hopper assumptions, said so */
    { 100, 2048, 32, 65536, 228 * 1024, 1024, 128, 4, 5120.0, 300.0, 600.0, GUIDE,
      "ASSUMED: shared memory 128 B/clk/SM, L2 5120 bytes/clk, latencies 300/600 ns as Hopper (Blackwell publishes none)" },
    { 103, 2048, 32, 65536, 228 * 1024, 1024, 128, 4, 5120.0, 300.0, 600.0, GUIDE,
      "ASSUMED: shared memory 128 B/clk/SM, L2 5120 bytes/clk, latencies 300/600 ns as Hopper (Blackwell publishes none)" },
    { 120, 1536, 24, 65536, 100 * 1024, 1024, 128, 4, 5120.0, 300.0, 600.0, GUIDE,
      "ASSUMED: shared memory 128 B/clk/SM, L2 5120 bytes/clk, latencies 300/600 ns as Hopper (Blackwell publishes none)" },
};

#define SHEET "datasheet SM count and boost clock, as data/peaks.json's entry"

const kb_est_gpu kb_est_gpus[] = {
    { "h100-sxm", "H100 SXM5", 90, 132, 1980, 50, "NVIDIA H100 Tensor Core GPU datasheet (SXM5); " SHEET },
    { "h100-pcie", "H100 PCIe", 90, 114, 1755, 50, "NVIDIA H100 Tensor Core GPU datasheet (PCIe); " SHEET },
    { "h200-sxm", "H200 SXM", 90, 132, 1980, 50, "NVIDIA H200 Tensor Core GPU datasheet; " SHEET },
    { "a100-sxm", "A100 SXM4 80GB", 80, 108, 1410, 40, "NVIDIA A100 Tensor Core GPU datasheet (80GB SXM); " SHEET },
    { "a100-pcie", "A100 PCIe 40GB", 80, 108, 1410, 40, "NVIDIA A100 Tensor Core GPU datasheet (40GB PCIe); " SHEET },
    { "l40s", "L40S", 89, 142, 2520, 48, "NVIDIA L40S datasheet; " SHEET },
    { "l4", "L4", 89, 58, 2040, 48, "NVIDIA L4 datasheet; " SHEET },
    { "rtx4090", "GeForce RTX 4090", 89, 128, 2520, 72, "NVIDIA Ada Lovelace architecture whitepaper; " SHEET },
    /* Blackwell (data/peaks.json says where each figure comes from). 0 = unpublished: no
     * boost clock for B200/B300/GB200/RTX PRO 6000 (the per-clock roofs are then left out),
     * no SM count for B300 (estimates refused), no L2 size for any of them. */
    { "b200", "B200", 100, 148, 0, 0, "SMs: device attribute of DGX/HGX B200 (shared/REFERENCE.md); clock, L2 unpublished" },
    { "b300", "B300", 103, 0, 0, 0, "SM count, clock and L2 unpublished (device reports disagree: 148, 160)" },
    { "gb200", "GB200", 100, 152, 0, 0, "per GPU of a GB200; SMs: device attribute reported on GB200 systems; clock, L2 "
      "unpublished" },
    { "rtx5090", "GeForce RTX 5090", 120, 170, 2407, 0, "NVIDIA GeForce RTX 5090 specifications: 170 SMs, boost 2407 MHz" },
    { "rtx-pro-6000", "RTX PRO 6000 Blackwell", 120, 188, 0, 0, "NVIDIA RTX PRO 6000 Blackwell specifications: 188 SMs "
      "(24,064 CUDA cores); clock unpublished" },
};
const int kb_est_n_gpus = (int)(sizeof kb_est_gpus / sizeof kb_est_gpus[0]);

const char *const kb_est_gpu_names[] = {
    "h100-sxm", "h100-pcie", "h200-sxm", "a100-sxm", "a100-pcie", "l40s", "l4", "rtx4090",
    "b200", "b300", "gb200", "rtx5090", "rtx-pro-6000", NULL,
};
_Static_assert(sizeof kb_est_gpu_names / sizeof kb_est_gpu_names[0] == sizeof kb_est_gpus / sizeof kb_est_gpus[0] + 1,
               "kb_est_gpu_names lists every GPU of kb_est_gpus");

const kb_est_gpu *kb_est_gpu_find(const char *name)
{
    for (int i = 0; i < kb_est_n_gpus; i++)
        if (name && strcmp(kb_est_gpus[i].name, name) == 0)
            return &kb_est_gpus[i];
    return NULL;
}

const kb_est_gpu *kb_est_gpu_reference(int sm)
{
    int cc = kb_arch_cc(sm) ? kb_arch_cc(sm) : sm;   /* sm_90a's reference GPU is sm_90's */
    for (int i = 0; i < kb_est_n_gpus; i++)
        if (kb_est_gpus[i].sm == cc)
            return &kb_est_gpus[i];
    return NULL;
}

const kb_est_arch *kb_est_arch_find(int sm)
{
    int row = sm == 86 ? 89 : sm;
    for (size_t i = 0; i < sizeof arches / sizeof arches[0]; i++)
        if (arches[i].sm == row)
            return &arches[i];
    return NULL;
}

kb_status kb_est_gpu_peaks(const kb_est_gpu *g, const char *path, kb_peaks *out, kb_sb *err)
{
    kb_device_info d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "%s", g->device);
    d.sm = g->sm;
    d.sm_count = g->sms;
    d.clock_khz = (int)(g->boost_mhz * 1000.0);
    d.caps = KB_CAP_ROOFLINE;
    kb_status st = kb_peaks_for_device(&d, path, out, err);
    if (st == KB_OK && !out->have_sheet) {
        kb_sb_printf(err, "%s: no datasheet entry matches '%s'", path ? path : kb_peaks_default_path(), g->device);
        return KB_ERR_SETUP;
    }
    return st;
}
