/* est_store.h - measured ceilings for a GPU `kbench estimate` models but does not have:
 * the results store keys ceilings by device name and UUID (results/ceilings.h), so the
 * estimate looks for any device of the store whose name data/peaks.json matches to the
 * same SKU as --gpu, and takes the GPU-timed ceilings (DRAM copy/read/write, launch) of the
 * one measured last. Emulator (CPU-timed) ceilings are never used. */
#ifndef KB_EST_STORE_H
#define KB_EST_STORE_H

#include "estimate/gpu.h"

/* Add to *p (the datasheet peaks of g, kb_est_gpu_peaks) the GPU-timed ceilings of the
 * store at db_path's most recently measured device that peaks_path (NULL: the default)
 * matches to p->sku. Returns the number of ceilings added, with note (n bytes) saying which
 * device and when ("measured on H100 SXM5 GPU-1234 ...: 3 measured ceilings from
 * results/kbench.db (latest run r1, 2026-01-01T00:00:00Z)"); 0 with note "" when the store
 * is absent or unreadable or holds no GPU ceilings of that SKU (not an error). */
int kb_est_store_ceilings(const char *db_path, const char *peaks_path, kb_peaks *p, char *note, size_t n);

/* Whether db_path can be read as the results store: KB_OK when it can, or when nothing is
 * there (no store yet); else KB_ERR_INPUT (not a regular file - a FIFO, a device -, not
 * SQLite, another application's database, the tuning database) or KB_ERR_SETUP (no
 * permission, locked), with "PATH: why" in err (results/dbfile.h). Never blocks, never
 * writes. */
kb_status kb_est_store_check(const char *db_path, kb_sb *err);

#endif /* KB_EST_STORE_H */
