/* nvml_topo.h - the node's GPUs as NVML sees them, for `kbench accept --system` (written from
 * NVIDIA's NVML API reference; no GPU has run it):
 *   - the GPUs (nvmlDeviceGetCount_v2, nvmlDeviceGetHandleByIndex_v2: NVML's numbering, the PCI
 *     bus order, which CUDA follows under CUDA_DEVICE_ORDER=PCI_BUS_ID);
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

#define KB_NVML_MAX_GPUS 16
#define KB_NVML_MAX_LINKS 18   /* NVML_NVLINK_MAX_LINKS (nvml.h, Hopper and Blackwell: 18) */

/* A pair's path, nvidia-smi topo -m's words. One name table (kb_nvml_path_name). */
typedef enum {
    KB_NVML_PATH_UNKNOWN = 0, KB_NVML_PATH_SELF, KB_NVML_PATH_NVLINK, KB_NVML_PATH_PIX, KB_NVML_PATH_PXB,
    KB_NVML_PATH_PHB, KB_NVML_PATH_NODE, KB_NVML_PATH_SYS, KB_NVML_PATH_COUNT
} kb_nvml_path;

const char *kb_nvml_path_name(kb_nvml_path p);   /* "?", "X", "NV", "PIX", "PXB", "PHB", "NODE", "SYS" */

typedef struct {
    int n;                                        /* GPUs read; 0: nothing (why) */
    char why[512];
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

/* Read the node into *out (out->n = 0 with why when NVML cannot be loaded or counts no GPU;
 * more than KB_NVML_MAX_GPUS GPUs: the first KB_NVML_MAX_GPUS, said in why). Never fails. */
void kb_nvml_node_read(kb_nvml_node *out);

#endif /* KB_NVML_TOPO_H */
