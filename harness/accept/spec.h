/* spec.h - acceptance specs: one YAML file per GPU SKU under data/acceptance/, saying
 * which GPUs it describes (PCI device id, or name + compute capability + SM count) and
 * the threshold of each acceptance test, each with its reference value, the fraction of
 * it a GPU must reach, and where the reference comes from (a datasheet, a DCGM golden
 * value, or a kbench measurement marked as such). A spec without `match` is the generic
 * one: its references are the device's own datasheet/clock-based peaks (`reference:
 * peak`), used for GPUs no other spec matches. Format: docs/acceptance.md.
 *
 * Every error names file:line:column, as the suite loader's do.
 */
#ifndef KB_ACCEPT_SPEC_H
#define KB_ACCEPT_SPEC_H

#include "core/kb.h"

/* The acceptance tests, in report order. One name table (kb_acc_test_name). */
typedef enum {
    KB_ACC_CORRECTNESS,     /* every case of the accept suite verified */
    KB_ACC_MEM_BW,          /* ceiling/copy GB/s >= reference x fraction */
    KB_ACC_GEMM_FP32,       /* best GEMM TFLOPS (kbench or cuBLASLt) per precision */
    KB_ACC_GEMM_TF32,
    KB_ACC_GEMM_FP16,
    KB_ACC_GEMM_BF16,
    KB_ACC_GEMM_INT8,       /* TOPS */
    KB_ACC_GEMM_FP8,        /* fp8 e4m3 */
    KB_ACC_LAUNCH,          /* per-launch time of back-to-back launches [us] <= limit */
    KB_ACC_CLOCKS,          /* no throttling during the sustained GEMM cases (NVML) */
    KB_ACC_ECC,             /* NVML volatile uncorrectable ECC errors */
    KB_ACC_ROW_REMAP,       /* NVML retired pages / row remapping pending or failed */
    KB_ACC_PCIE,            /* NVML PCIe link generation and width vs maximum */
    /* the node's tests (`kbench accept --system NAME`, accept/system.h) */
    KB_ACC_COLL,            /* every collective of the sweep verified element by element */
    KB_ACC_BUSBW,           /* all_reduce bus bandwidth at the sweep's largest size [GB/s] */
    KB_ACC_COLL_BUSY,       /* this rank's busy time per all_reduce call at that size [us]: fleet-relative */
    KB_ACC_P2P,             /* the slowest GPU pair's copy-engine bandwidth [GB/s] */
    KB_ACC_NVLINK,          /* active NVLink links of each GPU vs the system's count */
    KB_ACC_TOPOLOGY,        /* the connection of each GPU pair (NVLink, PCIe switch, CPU) vs the system's */
    KB_ACC_TEST_COUNT
} kb_acc_test;

#define KB_ACC_FIRST_SYSTEM KB_ACC_COLL   /* tests from here on are the node's (--system) */

/* How a test's threshold reads. */
typedef enum {
    KB_ACC_KIND_CHECK,      /* pass/fail without a number (correctness, health) */
    KB_ACC_KIND_FLOOR,      /* value >= reference x fraction */
    KB_ACC_KIND_LIMIT       /* value <= limit */
} kb_acc_kind;

const char *kb_acc_test_name(kb_acc_test t);   /* "memory_bandwidth", "gemm_fp16", ... */
const char *kb_acc_test_unit(kb_acc_test t);   /* "GB/s", "TFLOPS", "TOPS", "us", "" */
kb_acc_kind kb_acc_test_kind(kb_acc_test t);
/* The GEMM dtype of a gemm_* test, -1 for the others. */
int kb_acc_test_dtype(kb_acc_test t);
/* 1 for the node's tests (KB_ACC_FIRST_SYSTEM and after: `accept --system`), 0 for a GPU's. */
int kb_acc_test_is_system(kb_acc_test t);
/* The test of a name; -1 when none. */
int kb_acc_test_parse(const char *name);

typedef struct {
    int have;               /* the spec sets this test's threshold */
    int from_peak;          /* reference: peak - the device's datasheet/clock peak at run time */
    double reference;       /* [the test's unit] (FLOOR) */
    double fraction;        /* of the reference a GPU must reach (FLOOR) */
    double limit;           /* [the test's unit] (LIMIT) */
    char source[256];       /* where the reference (or the limit) comes from */
} kb_acc_threshold;

#define KB_ACC_MAX_MATCH 8

typedef struct {
    char name[64];          /* "h100-sxm" */
    char sku[96];           /* "NVIDIA H100 SXM5 80GB" */
    char file[512];         /* the file it was read from */
    int generic;            /* no match section: the fallback for unknown GPUs */
    int n_pci_ids;
    unsigned pci_ids[KB_ACC_MAX_MATCH];   /* PCI device ids (0x2330) */
    int n_names;
    char names[KB_ACC_MAX_MATCH][64];     /* phrases of the normalised device name */
    int sm;                 /* compute capability x10; 0 = any */
    int sm_count;           /* 0 = any */
    kb_acc_threshold t[KB_ACC_TEST_COUNT];
} kb_acc_spec;

/* What a spec is matched against. */
typedef struct {
    const char *name;       /* the device's name ("NVIDIA H100 80GB HBM3") */
    int sm, sm_count;
    unsigned pci_device_id; /* 0 when the backend does not report it */
} kb_acc_gpu;

/* Parse spec text (display_name in messages). KB_OK, or KB_ERR_INPUT with
 * "file:line:col: message" in err. */
kb_status kb_acc_spec_parse(const char *text, const char *display_name, kb_acc_spec *out, kb_sb *err);

/* Read and parse the spec file at path: as kb_acc_spec_parse; KB_ERR_IO when unreadable. */
kb_status kb_acc_spec_load(const char *path, kb_acc_spec *out, kb_sb *err);

/* 1 when spec s describes gpu g (never for a generic spec); *how (may be NULL) is set to
 * "pci device id" or "name + compute capability + SM count". */
int kb_acc_spec_matches(const kb_acc_spec *s, const kb_acc_gpu *g, const char **how);

/* The spec of gpu g among the *.yaml files of dir (in name order): the first that
 * matches, else the generic one. *how says why ("generic: no spec matched"). Errors:
 * a file that does not parse (KB_ERR_INPUT, its message), no spec and no generic
 * (KB_ERR_SETUP). */
kb_status kb_acc_spec_find(const char *dir, const kb_acc_gpu *g, kb_acc_spec *out, const char **how, kb_sb *err);

/* The default spec directory: <data root>/data/acceptance (static storage). */
const char *kb_acc_spec_dir(void);

#endif /* KB_ACCEPT_SPEC_H */
