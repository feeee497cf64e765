/* calib.c - the estimator's parameter table (calib.h). Each row says where its number
 * comes from; rows without a publication behind them say ASSUMPTION. The published
 * measurements the calibrated rows are checked against are in
 * tests/test_estimate_calibration.c, with their sources. */
#include "estimate/calib.h"

#include <string.h>

static const char *const path_names[] = { [KB_TENSOR_MMA_SYNC] = "mma.sync", [KB_TENSOR_WGMMA] = "wgmma" };
_Static_assert(sizeof path_names / sizeof path_names[0] == KB_TENSOR_PATH_COUNT, "one name per tensor path");

const char *kb_est_tensor_path_name(kb_tensor_path p)
{
    return (unsigned)p < KB_TENSOR_PATH_COUNT ? path_names[p] : "?";
}

#define GUIDE "CUDA C++ Programming Guide"
#define REF "shared/REFERENCE.md"
#define MAMF "S. Bekman, ml-engineering, compute/accelerator, 'Maximum Achievable Matmul FLOPS' table"

/* The first four names are looked up by kb_est_tensor_efficiency: "<path> efficiency". */
const kb_est_param kb_est_params[] = {
    { "mma.sync efficiency", 80, 0.90, "of the dense peak",
      "ASSUMPTION bounded by a measurement: the best A100 GEMM, cuBLAS bf16 (an mma.sync kernel on sm_80), reaches "
      "267.9 of 312 TFLOPS = 85.9% for the whole kernel (" MAMF "); its mainloop a little more", 1 },
    { "mma.sync efficiency", 89, 0.90, "of the dense peak",
      "ASSUMPTION: as sm_80 (mma.sync is Ada's native tensor path); no published Ada measurement is used", 0 },
    { "mma.sync efficiency", 90, 0.62, "of the dense peak",
      "mma.sync fed by ldmatrix tops out around 60-70% of Hopper's dense peak (" REF ", Hopper facts; FA3 paper: "
      "FlashAttention-2 reaches 35% of H100 with it); the low end of that range", 1 },
    { "wgmma efficiency", 90, 0.80, "of the dense peak",
      "the best measured wgmma GEMM: cuBLAS bf16 on H100 SXM 792.1 of 989.4 TFLOPS = 80.1% (" MAMF "; " REF
      ": cuBLAS ~795 TFLOPS at 8192^3); sm_90a only", 0 },
    { "sfu rate", 0, 16, "ops/clk/SM",
      GUIDE ", arithmetic instruction throughput: 32-bit reciprocal, rsqrt, log2, exp2, sin, cos at 16 results "
      "per clock per SM (cc 8.x, 9.0); FA3 paper: 3.9 TFLOPS of exp2 on H100 SXM5 = 132 x 16 x 1.83 GHz", 1 },
    { "achievable DRAM fraction", 0, 0.90, "of the datasheet",
      "H100 SXM device-to-device copy 2.90 TB/s = 86.7% of 3.35, best streaming about 3.0 TB/s = 90% (" REF
      "); the store's measured copy/read/write ceiling of the GPU replaces it", 1 },
    { "launch cost, eager", 0, 2.0, "us per launch",
      "ASSUMPTION: 'a few microseconds per kernel' (" REF ", achievable vs datasheet); the store's measured "
      "ceiling/launch of the GPU replaces it", 0 },
    { "launch cost, graph", 0, 1.0, "us per launch",
      "ASSUMPTION: below eager (" REF ": graphs lower); per kernel node of a replayed graph", 0 },
    { "pipeline fill", 0, 1.0, "DRAM latencies per launch",
      "ASSUMPTION: the first tile's load of a launch is exposed once (the prologue); later loads overlap", 0 },
    { "model clock", 0, 0, "MHz, per SKU",
      "the datasheet's tensor-core clock (data/peaks.json tensor_mhz: H100 SXM 1830, H100 PCIe 1620; the boost "
      "clock elsewhere): Hopper's datasheet states its tensor peaks at it; every on-chip roof (tensor, SIMT, "
      "SFU, issue, shared memory, L2) runs at it, the FP32 datasheet peak scaled to it", 0 },
    { "L2 bandwidth", 80, 5120, "bytes/clk",
      "NVIDIA A100 Tensor Core GPU Architecture whitepaper; ASSUMED the same on sm_89 and sm_90 (none published)", 0 },
    { "L2 hit latency", 0, 300, "ns", "ASSUMPTION: a round figure of the order microbenchmark papers report", 0 },
    { "DRAM latency (loaded)", 0, 600, "ns", "ASSUMPTION: a round figure of the order microbenchmark papers report", 0 },
    { "shared memory bandwidth", 0, 128, "bytes/clk/SM", GUIDE ": 32 banks of 4 bytes per clock", 0 },
    { "issue rate", 0, 4, "warp instructions/clk/SM", GUIDE ": 4 warp schedulers per SM (sm_80, 86, 89, 90)", 0 },
};
const int kb_est_n_params = (int)(sizeof kb_est_params / sizeof kb_est_params[0]);

int kb_est_tensor_efficiency(int sm, kb_tensor_path p, double *eff, const kb_est_param **row)
{
    int arch = sm == 86 ? 89 : sm;
    char name[48];
    if (row)
        *row = NULL;
    if (p == KB_TENSOR_WGMMA && sm < 90) {
        *eff = 0;
        return -1;
    }
    strcpy(name, kb_est_tensor_path_name(p));
    strcat(name, " efficiency");
    for (int i = 0; i < kb_est_n_params; i++)
        if (kb_est_params[i].sm == arch && strcmp(kb_est_params[i].name, name) == 0) {
            *eff = kb_est_params[i].value;
            if (row)
                *row = &kb_est_params[i];
            return 1;
        }
    *eff = 1.0;
    return 0;
}

/* The value of the every-architecture row called name (the table always has it). */
static double common(const char *name)
{
    for (int i = 0; i < kb_est_n_params; i++)
        if (kb_est_params[i].sm == 0 && strcmp(kb_est_params[i].name, name) == 0)
            return kb_est_params[i].value;
    return 0;
}

int kb_est_sfu_per_clk(int sm, double *per_clk)
{
    *per_clk = common("sfu rate");
    return sm == 80 || sm == 86 || sm == 89 || sm == 90;
}

double kb_est_dram_fraction(void) { return common("achievable DRAM fraction"); }

double kb_est_launch_us(int graph) { return common(graph ? "launch cost, graph" : "launch cost, eager"); }
