/* system.h - system specs for `kbench accept --system NAME`: what a multi-GPU node must
 * look like and reach, one YAML file per system under data/acceptance/systems/
 * (docs/acceptance.md, "Systems"):
 *
 *   system: hgx-h100-8
 *   description: "NVIDIA HGX H100 8-GPU ..."
 *   gpus: 8                                  # ranks (GPUs) of one node; 0 or absent: any
 *   topology: {expect: nvswitch, source: "..."}     # nvswitch | pcie | any
 *   nvlink: {links: 18, source: "..."}               # active links per GPU, or {unknown: "why"}
 *   sweep: {min: 8, max: 8G, factor: 2}              # nccl-tests' -b -e -f on GPUs
 *   emu_sweep: {min: 1K, max: 1M, factor: 4}         # on the emulator (default: this)
 *   thresholds:
 *     allreduce_busbw: {reference: 480, fraction: 0.85, unit: GB/s, source: "..."}
 *     p2p_bandwidth:   {unknown: "why no figure is given"}
 *
 * Every number carries its source; a figure nobody published is `unknown` with the reason
 * (its test is then SKIP saying so), never guessed. Errors name file:line:column.
 */
#ifndef KB_ACCEPT_SYSTEM_H
#define KB_ACCEPT_SYSTEM_H

#include "accept/spec.h"
#include "collective/coll_def.h"

/* What connects every pair of a node's GPUs. One name table (kb_sys_topo_name). */
typedef enum {
    KB_SYS_TOPO_ANY = 0,    /* not judged */
    KB_SYS_TOPO_NVSWITCH,   /* every pair through NVLink (NVSwitch): nvidia-smi topo -m "NV<n>" */
    KB_SYS_TOPO_PCIE,       /* no NVLink: PCIe (PIX, PXB, PHB, NODE or SYS) */
    KB_SYS_TOPO_COUNT
} kb_sys_topo;

const char *kb_sys_topo_name(kb_sys_topo t);   /* "any", "nvswitch", "pcie" */

typedef struct {
    char name[64];              /* "hgx-h100-8" */
    char description[160];
    char file[512];
    int gpus;                   /* GPUs of one node; 0 = any */
    kb_sys_topo topology;
    char topology_source[256];
    int nvlink_links;           /* active NVLink links per GPU; -1 unknown (nvlink_source says why) */
    char nvlink_source[256];
    kb_coll_sweep sweep;        /* on GPUs */
    kb_coll_sweep emu_sweep;    /* on the emulator */
    kb_acc_threshold busbw;     /* have = 0: unknown, busbw_unknown says why */
    kb_acc_threshold p2p;
    char busbw_unknown[256];
    char p2p_unknown[256];
} kb_acc_system;

/* Parse system spec text (display_name in messages). KB_OK, or KB_ERR_INPUT with
 * "file:line:col: message" in err. */
kb_status kb_acc_system_parse(const char *text, const char *display_name, kb_acc_system *out, kb_sb *err);

/* Read and parse the file at path (at most 1 MiB, a regular file): as kb_acc_system_parse;
 * KB_ERR_IO when unreadable. */
kb_status kb_acc_system_load(const char *path, kb_acc_system *out, kb_sb *err);

/* The system called name: a path when it holds '/' or ends in .yaml, else
 * <data root>/data/acceptance/systems/<name>.yaml. An unknown name is KB_ERR_INPUT listing
 * the systems there. */
kb_status kb_acc_system_find(const char *name, kb_acc_system *out, kb_sb *err);

#endif /* KB_ACCEPT_SYSTEM_H */
