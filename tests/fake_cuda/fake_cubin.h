/* fake_cubin.h - what the driver double reads from a module image: a CUBIN (an ELF file
 * of machine EM_CUDA, 190) parsed far enough to refuse what a real driver refuses and to
 * describe each kernel entry as cuFuncGetAttribute would.
 *
 * Read from the image (layouts as NVRTC 12/13 write them; checked against NVRTC 13.0):
 *   - the target arch: e_flags bits 8..15 for ELF ABI version >= 8 (CUDA 13's format,
 *     e.g. 0x6005a04 = sm_90), bits 0..7 before (CUDA <= 12); whether it is an arch-specific
 *     `a` target from the .nv.compat section: a record {format 2, attribute 0x09, value 1}
 *     (observed with NVRTC and nvcc 13.0: 1 for sm_90a/sm_100a/sm_120a, 0 for sm_90, sm_100
 *     and the family targets sm_100f/sm_120f; e_flags are the same for sm_90 and sm_90a);
 *   - the toolkit major from .note.nv.tkinfo ("Cuda compilation tools, release 13.0");
 *   - entries: FUNC symbols with a .text.<name> section; per entry from .nv.info.<name>:
 *     EIATTR_CBANK_PARAM_SIZE (0x19: parameter bytes), EIATTR_KPARAM_INFO (0x17: one per
 *     parameter: u32 index, u16 ordinal, u16 offset, u32 flags with the size in bits 18..31,
 *     as NVRTC 13 writes them), EIATTR_PARAM_CBANK (0x0a: u32 section, u16 offset, u16 size; the
 *     offset is 0x210 for sm_90 with NVRTC/nvcc 13.0, and a parameter of a 64-byte aligned type
 *     lands 64-byte aligned in the bank, not in the buffer: kb_tmap at buffer offset 48 after an
 *     int, 0x240 in the bank), EIATTR_MAX_THREADS (0x05: __launch_bounds__); registers from the global
 *     .nv.info's EIATTR_REGCOUNT (0x2f, by symbol index); static shared memory from the
 *     size of .nv.shared.<name> (less the 1 KiB reserved block sm_90+ images count in it).
 */
#ifndef FAKE_CUBIN_H
#define FAKE_CUBIN_H

#include <stddef.h>

#define FAKE_MAX_ENTRIES 64
#define FAKE_MAX_PARAMS 64

typedef struct {
    char name[128];
    int param_bytes;        /* -1 unknown */
    int n_params;           /* KPARAM_INFO records; -1 unknown */
    int param_size[FAKE_MAX_PARAMS]; /* [bytes] by ordinal (KPARAM_INFO: size in bits 18..31 of its flags) */
    int param_offset[FAKE_MAX_PARAMS]; /* [bytes] into the parameter buffer, by ordinal (KPARAM_INFO's u16 offset) */
    int param_cbank;        /* [bytes] where the parameter buffer starts in constant bank 0 (EIATTR_PARAM_CBANK), 0 unknown */
    int max_threads;        /* from __launch_bounds__, else 1024 */
    int static_shmem;       /* [bytes] */
    int regs;               /* -1 unknown */
} fake_entry;

typedef struct {
    int sm;                 /* x10 */
    int specific;           /* 1: an arch-specific (`a`) CUBIN, loads on exactly sm */
    int toolkit_major;      /* 0 unknown */
    int n_entries;
    fake_entry entries[FAKE_MAX_ENTRIES];
} fake_image;

/* Parse image (no size is passed to cuModuleLoadData: the ELF headers bound every read,
 * and a header that points past itself is refused). 0 on success; -1 when the image is not
 * a CUBIN of machine EM_CUDA (the caller answers CUDA_ERROR_INVALID_IMAGE). */
__attribute__((visibility("hidden"))) int fake_cubin_parse(const void *image, fake_image *out);

/* The entry called name, or NULL. */
__attribute__((visibility("hidden"))) const fake_entry *fake_cubin_entry(const fake_image *img,
                                                                         const char *name);

#endif
