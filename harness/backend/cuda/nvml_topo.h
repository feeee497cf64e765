/* nvml_topo.h - the node's GPUs as NVML sees them, for `kbench accept --system` (written from
 * NVIDIA's NVML API reference; no GPU has run it):
 *   - the GPUs (nvmlDeviceGetCount_v2, nvmlDeviceGetHandleByIndex_v2: NVML's numbering, the PCI
 *     bus order), put in CUDA's order: each CUDA device's PCI bus id (cuDeviceGetPCIBusId,
 *     "0000:3b:00.0") normalised to NVML's form ("00000000:3B:00.0", nvmlPciInfo_t.busId) and
 *     found with nvmlDeviceGetHandleByPciBusId_v2 (NVML API reference: it accepts "domain:bus:
 *     device.function" in hex), so entry i is CUDA ordinal i whatever CUDA_DEVICE_ORDER and
 *     CUDA_VISIBLE_DEVICES say. A CUDA device NVML does not find is an error naming its bus id;
 *     GPUs hidden from CUDA follow CUDA's (no ordinal: no P2P row), said in note;
 *   - each GPU's NVLink links: nvmlDeviceGetNvLinkState(dev, link, &isActive) for link 0 ..
 *     KB_NVML_MAX_LINKS-1; a link the GPU lacks answers NVML_ERROR_INVALID_ARGUMENT or
 *     NOT_SUPPORTED and is not counted;
 *   - each pair as `nvidia-smi topo -m` shows it: NVLink when nvmlDeviceGetP2PStatus(a, b,
 *     NVML_P2P_CAPS_INDEX_NVLINK) is NVML_P2P_STATUS_OK, else the PCIe path from
 *     nvmlDeviceGetTopologyCommonAncestor (SINGLE = PIX, MULTIPLE = PXB, HOSTBRIDGE = PHB,
 *     NODE, SYSTEM = SYS);
 *   - the NVLink links between each pair (nvidia-smi topo -m's NV<n>): per active link of a GPU
 *     the remote end (nvmlDeviceGetNvLinkRemoteDeviceType: GPU, IBMNPU, SWITCH) and, for a GPU,
 *     its PCI address (nvmlDeviceGetNvLinkRemotePciInfo_v2) matched to the peer's
 *     (nvmlDeviceGetPciInfo_v3: domain, bus, device), as NVIDIA's go-gpuallocator counts them;
 *     links to an NVSwitch reach every GPU with switch links, so a pair of such GPUs counts the
 *     fewer of their two switch-link counts (kbench's rule: an HGX H100 pair is NV18).
 * libnvidia-ml.so.1 is dlopen'ed as backend/cuda/nvml.h does ($KBENCH_LIBNVML names another).
 */
#ifndef KB_NVML_TOPO_H
#define KB_NVML_TOPO_H

#include <stddef.h>

#define KB_NVML_MAX_GPUS 16
#define KB_NVML_MAX_LINKS 18   /* NVML_NVLINK_MAX_LINKS (nvml.h, Hopper and Blackwell: 18) */

/* A pair's path, nvidia-smi topo -m's words. One name table (kb_nvml_path_name). */
typedef enum {
    KB_NVML_PATH_UNKNOWN = 0, KB_NVML_PATH_SELF, KB_NVML_PATH_NVLINK, KB_NVML_PATH_PIX, KB_NVML_PATH_PXB,
    KB_NVML_PATH_PHB, KB_NVML_PATH_NODE, KB_NVML_PATH_SYS, KB_NVML_PATH_COUNT
} kb_nvml_path;

const char *kb_nvml_path_name(kb_nvml_path p);   /* "?", "X", "NV", "PIX", "PXB", "PHB", "NODE", "SYS" */

#define KB_NVML_BUS_ID_LEN 32   /* NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE */

typedef struct {
    int n;                                        /* GPUs read; 0: nothing (why) */
    char why[512];
    int by_cuda;                                  /* 1: entry i < cuda_n is CUDA ordinal i; 0: NVML's order */
    int cuda_n;                                   /* CUDA's devices (the first entries) */
    int map_failed;                               /* a CUDA device was not found in NVML (why names it) */
    char note[512];                               /* GPUs hidden from CUDA, or why NVML's order */
    int nvml_index[KB_NVML_MAX_GPUS];             /* NVML's index of entry i */
    char bus_id[KB_NVML_MAX_GPUS][KB_NVML_BUS_ID_LEN]; /* its bus id, NVML's form ("00000000:3B:00.0") */
    int links_read;                               /* NVLink state read (else links_why) */
    char links_why[256];
    int links[KB_NVML_MAX_GPUS];                  /* active NVLink links */
    int links_max[KB_NVML_MAX_GPUS];              /* links the GPU has */
    char down[KB_NVML_MAX_GPUS][64];              /* the inactive links, "3, 7" */
    int paths_read;                               /* the pair table read (else paths_why) */
    char paths_why[256];
    kb_nvml_path path[KB_NVML_MAX_GPUS][KB_NVML_MAX_GPUS];
    int counts_read;                              /* the link counts read (else counts_why) */
    char counts_why[256];
    int nv_links[KB_NVML_MAX_GPUS][KB_NVML_MAX_GPUS]; /* active NVLink links between a pair (0 on the diagonal) */
} kb_nvml_node;

/* Normalise a PCI bus id in any form NVML accepts ("domain:bus:device.function", "domain:bus:device",
 * "bus:device.function"; hex, either case) to NVML's busId form "%08X:%02X:%02X.%X" in out.
 * 0, or -1 when in is none of them (out ""). */
int kb_nvml_bus_id_norm(const char *in, char *out, size_t size);

/* Read the node into *out in CUDA's order: cuda_ids[0..n_cuda) are CUDA's devices' bus ids by
 * ordinal (backend/cuda/cuda_p2p.h kb_cuda_devices_read); n_cuda < 0: CUDA's devices are not
 * known (cuda_why), NVML's order, said in note. out->n = 0 with why when NVML cannot be loaded,
 * counts no GPU, or does not find a CUDA device (map_failed: the device and its bus id named);
 * more than KB_NVML_MAX_GPUS GPUs: the first KB_NVML_MAX_GPUS, said in why. Never fails. */
void kb_nvml_node_read(const char (*cuda_ids)[KB_NVML_BUS_ID_LEN], int n_cuda, const char *cuda_why,
                       kb_nvml_node *out);

#endif /* KB_NVML_TOPO_H */
