/* calib.c - the estimator's parameter table (calib.h). Each row says where its number
 * comes from; rows without a publication behind them say ASSUMPTION. The published
 * measurements the calibrated rows are checked against are in
 * tests/test_estimate_calibration.c, with their sources. */
#include "estimate/calib.h"

#include <stdio.h>
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
#define FA2 "Dao 2023, FlashAttention-2, arXiv 2307.08691, Fig. 5"
#define FA3 "Shah et al. 2024, FlashAttention-3, arXiv 2407.08608: FlashAttention-2 reaches 35% utilisation on H100"

/* Values with a derivation: the whole-kernel fraction of the best measured mma.sync GEMM on
 * A100 (cuBLAS bf16, 267.9 of 312 TFLOPS) and of the best measured copy on H100 SXM (2.90 of
 * 3.35 TB/s). kbench's kernels are not expected to beat either, so an estimate built on them
 * stays at or below the published figure (the calibration is one-sided). */
#define A100_CUBLAS (267.9 / 312.0)
#define H100_COPY (2900.0 / 3350.0)
/* The products' efficiency on sm_90 in attention, from FlashAttention-2's published 35% of
 * H100's dense peak (FA3 paper) with the model's softmax chain at d = 128, BKV = 64 taken out:
 * per score the products take 512 / 4096 = 0.125 SM clocks at the peak, the softmax
 * max(FP32 (4/128 + 1/64), ex2 (65/64)/16) + conversion 0.5/16 = 0.0947 (docs/estimate.md),
 * so 0.125 / (0.125 / 0.35 - 0.0947) = 0.476. */
#define H100_FA2_PRODUCTS (0.125 / (0.125 / 0.35 - (65.0 / 64.0 / 16.0 + 0.5 / 16.0)))

/* Published wgmma GEMM figures (shared/REFERENCE.md): DeepGEMM fp8 1350 TFLOPS at release (H800,
 * dense fp8 peak 1978.9), below cuBLAS bf16's 716 of 989.4 at 4096^3 as a fraction. */
#define HOPPER_WGMMA (1350.0 / 1978.9)

/* FlashAttention-3 (wgmma, TMA, ping-pong and intra-warpgroup overlap, persistent scheduling)
 * measured at the FA3 paper's shapes (B x S = 16k, H x D = 2048), bf16 forward, head dim 128,
 * non-causal, H100: 565.5 TFLOPS at seq 2k, 620.7 at 16k (pytorch/benchmark PR 2391, the test
 * plan's table). kbench's attention/fa3 has a subset of FA3's techniques, so its products get
 * FA3's whole-kernel fraction at 2k (the lower one): an estimate built on it stays below FA3. */
#define H100_FA3 (565.5 / 989.4)
#define FA3_MEASURED "pytorch/benchmark PR 2391 (FlashAttention-3 at the FA3 paper's shapes, bf16, d = 128, H100)"
/* FlashAttention-3's fp8 forward (FA3 paper, Fig. 7, the fp8 panels' bar labels; H100 SXM5, the
 * paper's shapes): head dim 128, seq 2k 733 TFLOPS (16k: 1008); head dim 256, 16k 1171 ("close
 * to 1.2 PFLOPs/s", the abstract). Its whole-kernel fraction of the fp8 dense peak at d = 128,
 * 2k (the lower one, as for bf16): 733 / 1978.9 = 37.0%, below bf16's 57.2% - the softmax's
 * exponentials do not get faster with the products. */
#define H100_FA3_FP8 (733.0 / 1978.9)
#define FA3_FP8_FIG "Shah et al. 2024, FlashAttention-3, arXiv 2407.08608, Fig. 7 (fp8 forward, H100 SXM5)"

/* kb_est_tensor_efficiency looks rows up by "<path> efficiency", kb_est_attention_efficiency
 * by "<path> attention efficiency"; common() the every-architecture rows by name. */
const kb_est_param kb_est_params[] = {
    { "mma.sync efficiency", 80, A100_CUBLAS, "of the dense peak",
      "the best published mma.sync GEMM: cuBLAS bf16 on A100 SXM (an mma.sync kernel on sm_80) reaches 267.9 of "
      "312 TFLOPS = 85.9% for the whole kernel (" MAMF "); kbench's GEMM is not expected to beat it", 1 },
    { "mma.sync efficiency", 89, A100_CUBLAS, "of the dense peak",
      "ASSUMPTION: as sm_80 (mma.sync is Ada's native tensor path); no published Ada measurement is used", 0 },
    { "mma.sync efficiency", 90, 0.62, "of the dense peak",
      "mma.sync fed by ldmatrix tops out around 60-70% of Hopper's dense peak (" REF ", Hopper facts; FA3 paper: "
      "mma.sync reaches about 2/3 of H100's tensor peak); the low end of that range", 1 },
    { "wgmma efficiency", 90, HOPPER_WGMMA, "of the dense peak",
      "the lower of two published whole-kernel fractions of wgmma GEMMs at comparable sizes: DeepGEMM's fp8 at "
      "release, 1350 of 1978.9 TFLOPS = 68.2% (H800, the same SMs and tensor peak as H100 SXM), and cuBLAS bf16 "
      "at 4096^3, 716 of 989.4 = 72.4% (" REF "); kbench's gemm/wgmma (no multicast, never tuned on a "
      "GPU) is not expected to beat either (cuBLAS's best, 792.1 = 80.1% at 8192^3, " MAMF ", would "
      "flatter it); sm_90a only", 1 },
    { "mma.sync attention efficiency", 80, A100_CUBLAS, "of the dense peak",
      "attention's products (between softmax phases, serial_pipes) at the GEMM's 85.9%: no separate figure; "
      "FlashAttention-2's published A100 figures check it (" FA2 ")", 1 },
    { "mma.sync attention efficiency", 89, A100_CUBLAS, "of the dense peak",
      "ASSUMPTION: as sm_80 (no published Ada attention figure is used)", 0 },
    { "mma.sync attention efficiency", 90, H100_FA2_PRODUCTS, "of the dense peak",
      "FlashAttention-2 (the same mma.sync design) reaches 35% of H100 SXM's dense peak (" FA3 "); with the "
      "model's softmax chain at d = 128, BKV = 64 (0.0947 SM clocks per score against 0.125 for the products at the "
      "peak) taken out, its products run at 0.125 / (0.125/0.35 - 0.0947) = 0.476, below a GEMM's 0.62: each "
      "warp's products come in one-tile bursts between softmax phases, with only two resident blocks per SM "
      "(255 registers) to hide their fill", 1 },
    { "wgmma attention efficiency", 90, H100_FA3, "of the dense peak",
      "FlashAttention-3 itself reaches 565.5 of 989.4 TFLOPS = 57.2% at seq 2k (620.7 = 62.7% at 16k), d = 128, "
      "non-causal (" FA3_MEASURED "); kbench's fa3 has no intra-warpgroup overlap of softmax and QK^T and no "
      "persistent scheduler, so it is not expected to beat FA3: its products run at FA3's lower whole-kernel "
      "fraction, below the wgmma GEMM's 68.2% (which put kbench's fa3 at 650 TFLOPS there, above FA3's "
      "measured 565.5); sm_90a only", 1 },
    { "wgmma fp8 attention efficiency", 90, H100_FA3_FP8, "of the fp8 dense peak",
      "FlashAttention-3's fp8 forward reaches 733 of 1978.9 TFLOPS = 37.0% at d = 128, seq 2k (1008 = 50.9% at "
      "16k; 1171 at d = 256, 16k: the abstract's 'close to 1.2 PFLOPs/s') (" FA3_FP8_FIG "); kbench's fp8 fa3 "
      "(FA3's subset, plus a V pre-pass) is not expected to beat it: its products run at FA3's lower fraction; "
      "with bf16's 57.2% on the doubled peak the estimate put it at 985 TFLOPS there; sm_90a only", 1 },
    { "sfu rate", 0, 16, "ops/clk/SM",
      GUIDE ", arithmetic instruction throughput: 32-bit reciprocal, rsqrt, log2, exp2, sin, cos at 16 results "
      "per clock per SM (cc 8.x, 9.0); FA3 paper: 3.9 TFLOPS of exp2 on H100 SXM5 = 132 x 16 x 1.83 GHz", 1 },
    { "conversion rate", 0, 16, "ops/clk/SM",
      GUIDE ", arithmetic instruction throughput: 'all other type conversions' (here fp32 -> 16-bit, "
      "cvt.rn.bf16x2.f32 / f16x2) at 16 results per clock per SM (cc 7.x-9.0)", 1 },
    { "compare/min/max rate", 0, 64, "ops/clk/SM",
      GUIDE ", arithmetic instruction throughput: compare, minimum, maximum at 64 results per clock per SM "
      "(half the FP32 FMA rate on sm_86/89/90); counted by kernels/attention_model.c as FMA-slot equivalents", 1 },
    { "achievable DRAM fraction", 0, H100_COPY, "of the datasheet",
      "the best published device-to-device copy: 2.90 of 3.35 TB/s on H100 SXM = 86.6% (" REF "); QuACK's "
      "RMSNorm/softmax reach about 3.0 TB/s on the same GPU, so kbench's streaming estimates stay below both; "
      "assumed the same fraction on the other GPUs; the store's measured copy/read/write ceiling of the GPU "
      "replaces it", 1 },
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

/* The row "<path><what>" for architecture sm (sm_86 reads sm_89's), or NULL. */
static const kb_est_param *path_row(int sm, kb_tensor_path p, const char *what)
{
    int arch = sm == 86 ? 89 : sm;
    char name[64];
    snprintf(name, sizeof name, "%s%s", kb_est_tensor_path_name(p), what);
    for (int i = 0; i < kb_est_n_params; i++)
        if (kb_est_params[i].sm == arch && strcmp(kb_est_params[i].name, name) == 0)
            return &kb_est_params[i];
    return NULL;
}

int kb_est_tensor_efficiency(int sm, kb_tensor_path p, double *eff, const kb_est_param **row)
{
    if (row)
        *row = NULL;
    if (p == KB_TENSOR_WGMMA && sm < 90) {
        *eff = 0;
        return -1;
    }
    const kb_est_param *r = path_row(sm, p, " efficiency");
    *eff = r ? r->value : 1.0;
    if (row)
        *row = r;
    return r != NULL;
}

int kb_est_attention_efficiency(int sm, kb_tensor_path p, double *eff, const kb_est_param **row)
{
    const kb_est_param *r = path_row(sm, p, " attention efficiency");
    if (!r)
        return kb_est_tensor_efficiency(sm, p, eff, row);
    *eff = r->value;
    if (row)
        *row = r;
    return 1;
}

int kb_est_attention_efficiency_dt(int sm, kb_tensor_path p, kb_dtype dt, double *eff, const kb_est_param **row)
{
    const kb_est_param *r =
        dt == KB_DT_FP8E4M3 || dt == KB_DT_FP8E5M2 ? path_row(sm, p, " fp8 attention efficiency") : NULL;
    if (!r)
        return kb_est_attention_efficiency(sm, p, eff, row);
    *eff = r->value;
    if (row)
        *row = r;
    return 1;
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

int kb_est_cvt_per_clk(int sm, double *per_clk)
{
    *per_clk = common("conversion rate");
    return sm == 80 || sm == 86 || sm == 89 || sm == 90;
}

double kb_est_dram_fraction(void) { return common("achievable DRAM fraction"); }

double kb_est_launch_us(int graph) { return common(graph ? "launch cost, graph" : "launch cost, eager"); }
