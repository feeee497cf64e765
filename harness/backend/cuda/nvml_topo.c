/* nvml_topo.c - the node's NVLink state and pair table through NVML (see nvml_topo.h).
 * Types as backend/cuda/nvml.c declares them, from NVIDIA's nvml.h documentation:
 * nvmlReturn_t int (0 success, 2 invalid argument, 3 not supported), a device an opaque
 * pointer, nvmlEnableState_t int (1 enabled), nvmlGpuP2PStatus_t int (0 OK),
 * nvmlGpuP2PCapsIndex_t int (NVML_P2P_CAPS_INDEX_NVLINK = 2), nvmlGpuTopologyLevel_t int
 * (INTERNAL 0, SINGLE 10, MULTIPLE 20, HOSTBRIDGE 30, NODE 40, SYSTEM 50). */
#include "backend/cuda/nvml_topo.h"

#include "backend/cuda/nvml.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvml_ret;
typedef struct nvml_device_st *nvml_device;
enum { P2P_CAPS_INDEX_NVLINK = 2, P2P_STATUS_OK = 0, NVML_ERR_INVALID_ARGUMENT = 2, NVML_ERR_NOT_SUPPORTED = 3 };

static const char *const path_names[] = { "?", "X", "NV", "PIX", "PXB", "PHB", "NODE", "SYS" };
_Static_assert(sizeof path_names / sizeof path_names[0] == KB_NVML_PATH_COUNT, "one name per kb_nvml_path");

const char *kb_nvml_path_name(kb_nvml_path p) { return p < KB_NVML_PATH_COUNT ? path_names[p] : "?"; }

typedef struct {
    nvml_ret (*Init)(void);
    nvml_ret (*Shutdown)(void);
    nvml_ret (*Count)(unsigned *);
    nvml_ret (*ByIndex)(unsigned, nvml_device *);
    nvml_ret (*ByPciBusId)(const char *, nvml_device *);
    const char *(*ErrorString)(nvml_ret);                                /* OPTIONAL */
    nvml_ret (*LinkState)(nvml_device, unsigned, int *);                 /* OPTIONAL */
    nvml_ret (*P2P)(nvml_device, nvml_device, int, int *);              /* OPTIONAL */
    nvml_ret (*Ancestor)(nvml_device, nvml_device, int *);              /* OPTIONAL */
    nvml_ret (*Pci)(nvml_device, void *);                                /* OPTIONAL nvmlPciInfo_t */
    nvml_ret (*RemotePci)(nvml_device, unsigned, void *);                /* OPTIONAL */
    nvml_ret (*RemoteType)(nvml_device, unsigned, int *);               /* OPTIONAL */
} topo_api;

/* nvmlPciInfo_t (nvml.h, _v3 layout): the fields a PCI address is matched on. */
typedef struct {
    char bus_id_legacy[16];
    unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
} pci_info;
enum { REMOTE_GPU = 0, REMOTE_SWITCH = 2 };   /* nvmlIntNvLinkDeviceType_t */

static void *sym(void *dl, const char *a, const char *b)
{
    void *p = dlsym(dl, a);
    return p || !b ? p : dlsym(dl, b);
}

/* NVML's common-ancestor level as nvidia-smi's word. */
static kb_nvml_path level_path(int level)
{
    switch (level) {
    case 0: case 10: return KB_NVML_PATH_PIX;   /* INTERNAL (one board), SINGLE */
    case 20: return KB_NVML_PATH_PXB;
    case 30: return KB_NVML_PATH_PHB;
    case 40: return KB_NVML_PATH_NODE;
    case 50: return KB_NVML_PATH_SYS;
    default: return KB_NVML_PATH_UNKNOWN;
    }
}

/* "what -> NVML_ERROR_NAME: nvmlErrorString's words" into out: the failing call named. */
static void fail(const topo_api *a, nvml_ret r, char *out, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(out, size, fmt, ap);
    va_end(ap);
    if (len < 0 || (size_t)len >= size)
        return;
    const char *name = kb_nvml_ret_name(r), *msg = a->ErrorString ? a->ErrorString(r) : NULL;
    if (name)
        snprintf(out + len, size - (size_t)len, " -> %s%s%s", name, msg ? ": " : "", msg ? msg : "");
    else
        snprintf(out + len, size - (size_t)len, " -> nvmlReturn_t %d%s%s", r, msg ? ": " : "", msg ? msg : "");
}

static void read_links(const topo_api *a, nvml_device *dev, kb_nvml_node *out)
{
    if (!a->LinkState) {
        snprintf(out->links_why, sizeof out->links_why, "nvmlDeviceGetNvLinkState: not exported by this libnvidia-ml");
        return;
    }
    for (int i = 0; i < out->n; i++) {
        int len = 0;
        for (unsigned l = 0; l < KB_NVML_MAX_LINKS; l++) {
            int active = 0;
            nvml_ret r = a->LinkState(dev[i], l, &active);
            if (r == NVML_ERR_INVALID_ARGUMENT || r == NVML_ERR_NOT_SUPPORTED)
                continue;   /* a link this GPU does not have */
            if (r != 0) {
                fail(a, r, out->links_why, sizeof out->links_why, "nvmlDeviceGetNvLinkState(GPU %d, link %u)", i, l);
                return;
            }
            out->links_max[i]++;
            if (active == 1)
                out->links[i]++;
            else if (len < (int)sizeof out->down[i] - 4)
                len += snprintf(out->down[i] + len, sizeof out->down[i] - (size_t)len, "%s%u", len ? ", " : "", l);
        }
    }
    out->links_read = 1;
}

static void read_paths(const topo_api *a, nvml_device *dev, kb_nvml_node *out)
{
    if (!a->P2P || !a->Ancestor) {
        snprintf(out->paths_why, sizeof out->paths_why, "nvmlDeviceGetP2PStatus or "
                 "nvmlDeviceGetTopologyCommonAncestor: not exported by this libnvidia-ml");
        return;
    }
    for (int i = 0; i < out->n; i++)
        for (int j = 0; j < out->n; j++) {
            int st = -1, level = -1;
            if (i == j) {
                out->path[i][j] = KB_NVML_PATH_SELF;
                continue;
            }
            nvml_ret r = a->P2P(dev[i], dev[j], P2P_CAPS_INDEX_NVLINK, &st);
            if (r == 0 && st == P2P_STATUS_OK) {
                out->path[i][j] = KB_NVML_PATH_NVLINK;
                continue;
            }
            r = a->Ancestor(dev[i], dev[j], &level);
            if (r != 0) {
                fail(a, r, out->paths_why, sizeof out->paths_why, "nvmlDeviceGetTopologyCommonAncestor(GPU %d, GPU %d)",
                     i, j);
                return;
            }
            out->path[i][j] = level_path(level);
        }
    out->paths_read = 1;
}

/* The GPU whose PCI address is p's, or -1. */
static int gpu_at(const pci_info *gpus, int n, const pci_info *p)
{
    for (int j = 0; j < n; j++)
        if (gpus[j].domain == p->domain && gpus[j].bus == p->bus && gpus[j].device == p->device)
            return j;
    return -1;
}

/* GPU i's active links: to a switch (*sw), or counted per peer GPU in out->nv_links[i]. 0, or
 * -1 with counts_why. */
static int count_links(const topo_api *a, nvml_device d, int i, const pci_info *gpus, int *sw, kb_nvml_node *out)
{
    for (unsigned l = 0; l < KB_NVML_MAX_LINKS; l++) {
        int active = 0, type = REMOTE_GPU;
        pci_info p;
        if (a->LinkState(d, l, &active) != 0 || active != 1)
            continue;   /* absent or down: not a link between GPUs */
        nvml_ret r = a->RemoteType ? a->RemoteType(d, l, &type) : 0;
        if (r == 0 && type == REMOTE_SWITCH) {
            (*sw)++;
            continue;
        }
        memset(&p, 0, sizeof p);
        if (r == 0 && type == REMOTE_GPU)
            r = a->RemotePci(d, l, &p);
        if (r != 0) {
            fail(a, r, out->counts_why, sizeof out->counts_why, "nvmlDeviceGetNvLinkRemote%s(GPU %d, link %u)",
                 type == REMOTE_GPU ? "PciInfo_v2" : "DeviceType", i, l);
            return -1;
        }
        int j = type == REMOTE_GPU ? gpu_at(gpus, out->n, &p) : -1;
        if (j >= 0 && j != i)
            out->nv_links[i][j]++;
    }
    return 0;
}

static void read_counts(const topo_api *a, nvml_device *dev, kb_nvml_node *out)
{
    pci_info gpus[KB_NVML_MAX_GPUS];
    int sw[KB_NVML_MAX_GPUS] = { 0 };
    if (!a->LinkState || !a->Pci || !a->RemotePci) {
        snprintf(out->counts_why, sizeof out->counts_why, "nvmlDeviceGetNvLinkState, nvmlDeviceGetPciInfo_v3 or "
                 "nvmlDeviceGetNvLinkRemotePciInfo_v2: not exported by this libnvidia-ml");
        return;
    }
    for (int i = 0; i < out->n; i++) {
        nvml_ret r = a->Pci(dev[i], &gpus[i]);
        if (r != 0) {
            fail(a, r, out->counts_why, sizeof out->counts_why, "nvmlDeviceGetPciInfo_v3(GPU %d)", i);
            return;
        }
    }
    for (int i = 0; i < out->n; i++)
        if (count_links(a, dev[i], i, gpus, &sw[i], out) != 0)
            return;
    for (int i = 0; i < out->n; i++)
        for (int j = 0; j < out->n; j++)
            if (i != j && sw[i] && sw[j])
                out->nv_links[i][j] += sw[i] < sw[j] ? sw[i] : sw[j];
    out->counts_read = 1;
}

int kb_nvml_bus_id_norm(const char *in, char *out, size_t size)
{
    unsigned d = 0, b = 0, v = 0, f = 0;
    int used = -1, got;
    if (size)
        out[0] = 0;
    if (!in || strspn(in, "0123456789abcdefABCDEF:.") != strlen(in))
        return -1;
    /* the forms nvmlDeviceGetHandleByPciBusId_v2 accepts, in hex: domain:bus:device.function,
     * domain:bus:device, bus:device.function; each must be the whole text (%n at its end) */
    got = sscanf(in, "%x:%x:%x.%x%n", &d, &b, &v, &f, &used);
    int ok = got == 4 && used >= 0 && !in[used];
    if (!ok) {
        used = -1;
        f = 0;
        got = sscanf(in, "%x:%x:%x%n", &d, &b, &v, &used);
        ok = got == 3 && used >= 0 && !in[used];
    }
    if (!ok) {
        used = -1;
        d = 0;
        got = sscanf(in, "%x:%x.%x%n", &b, &v, &f, &used);
        ok = got == 3 && used >= 0 && !in[used];
    }
    if (!ok || b > 0xff || v > 0x1f || f > 7)
        return -1;
    snprintf(out, size, "%08X:%02X:%02X.%X", d, b, v, f);
    return 0;
}

/* NVML's index of CUDA device c (its bus id cuda_id) among dev[0..n), or -1 with why naming the
 * device and its bus id. */
static int find_cuda_device(const topo_api *a, const nvml_device *dev, int n, int c, const char *cuda_id,
                            kb_nvml_node *out)
{
    char id[KB_NVML_BUS_ID_LEN];
    nvml_device h = NULL;
    if (kb_nvml_bus_id_norm(cuda_id, id, sizeof id) != 0) {
        snprintf(out->why, sizeof out->why, "CUDA device %d: PCI bus id '%.40s' is not domain:bus:device.function",
                 c, cuda_id);
        return -1;
    }
    nvml_ret r = a->ByPciBusId(id, &h);
    if (r != 0) {
        fail(a, r, out->why, sizeof out->why, "CUDA device %d (PCI bus id %s) is not in NVML: "
             "nvmlDeviceGetHandleByPciBusId_v2(\"%s\")", c, cuda_id, id);
        return -1;
    }
    for (int k = 0; k < n; k++)
        if (dev[k] == h)
            return k;
    snprintf(out->why, sizeof out->why, "CUDA device %d (PCI bus id %s): NVML's handle for it is none of its "
             "first %d GPUs", c, cuda_id, n);
    return -1;
}

/* order[i]: the NVML index of entry i - CUDA's devices by ordinal, then the GPUs hidden from CUDA
 * (out->note). 0, or -1 with out->why (out->map_failed). */
static int cuda_order(const topo_api *a, const nvml_device *dev, int n, const char (*ids)[KB_NVML_BUS_ID_LEN],
                      int n_cuda, int *order, kb_nvml_node *out)
{
    int used[KB_NVML_MAX_GPUS] = { 0 }, m = 0, len = 0;
    for (int c = 0; c < n_cuda; c++) {
        int k = find_cuda_device(a, dev, n, c, ids[c], out);
        if (k >= 0 && used[k])
            snprintf(out->why, sizeof out->why, "CUDA devices %d and %d are one GPU (PCI bus id %s; MIG instances?): "
                     "the node's pairs need whole GPUs", used[k] - 1, c, ids[c]);
        if (k < 0 || used[k]) {
            out->map_failed = 1;
            return -1;
        }
        used[k] = c + 1;
        order[m++] = k;
    }
    for (int k = 0; k < n; k++)
        if (!used[k]) {
            order[m++] = k;
            if (len < (int)sizeof out->note - 80)
                len += snprintf(out->note + len, sizeof out->note - (size_t)len, "%sNVML GPU %d", len ? ", " : "", k);
        }
    if (len)
        snprintf(out->note + len, sizeof out->note - (size_t)len, " hidden from CUDA (CUDA_VISIBLE_DEVICES): "
                 "after CUDA's %d, no P2P row", n_cuda);
    out->cuda_n = n_cuda;
    out->by_cuda = 1;
    return 0;
}

static void read_with(const topo_api *a, const char (*ids)[KB_NVML_BUS_ID_LEN], int n_cuda, const char *cuda_why,
                      kb_nvml_node *out)
{
    unsigned count = 0;
    nvml_ret r = a->Count(&count);
    if (r != 0 || count == 0) {
        if (r)
            fail(a, r, out->why, sizeof out->why, "nvmlDeviceGetCount_v2");
        else
            snprintf(out->why, sizeof out->why, "NVML counts no GPU");
        return;
    }
    nvml_device dev[KB_NVML_MAX_GPUS], ord[KB_NVML_MAX_GPUS];
    int n = count > KB_NVML_MAX_GPUS ? KB_NVML_MAX_GPUS : (int)count, order[KB_NVML_MAX_GPUS];
    for (int i = 0; i < n; i++)
        if ((r = a->ByIndex((unsigned)i, &dev[i])) != 0) {
            fail(a, r, out->why, sizeof out->why, "nvmlDeviceGetHandleByIndex_v2(%d)", i);
            return;
        }
    for (int i = 0; i < n; i++)
        order[i] = i;
    if (n_cuda < 0)
        snprintf(out->note, sizeof out->note, "GPUs in NVML's order: CUDA's devices unknown (%.400s)", cuda_why);
    else if (cuda_order(a, dev, n, ids, n_cuda, order, out) != 0)
        return;
    for (int i = 0; i < n; i++) {
        pci_info p;
        memset(&p, 0, sizeof p);
        ord[i] = dev[order[i]];
        out->nvml_index[i] = order[i];
        if (a->Pci && a->Pci(ord[i], &p) == 0)
            snprintf(out->bus_id[i], sizeof out->bus_id[i], "%.*s", (int)sizeof p.bus_id, p.bus_id);
    }
    out->n = n;
    if (count > KB_NVML_MAX_GPUS)
        snprintf(out->why, sizeof out->why, "NVML counts %u GPUs: the first %d read", count, KB_NVML_MAX_GPUS);
    read_links(a, ord, out);
    read_paths(a, ord, out);
    read_counts(a, ord, out);
}

void kb_nvml_node_read(const char (*cuda_ids)[KB_NVML_BUS_ID_LEN], int n_cuda, const char *cuda_why,
                       kb_nvml_node *out)
{
    memset(out, 0, sizeof *out);
    const char *path = getenv("KBENCH_LIBNVML");
    if (!path || !*path)
        path = "libnvidia-ml.so.1";
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        snprintf(out->why, sizeof out->why, "NVML unavailable: %s", dlerror());
        return;
    }
    topo_api a;
    *(void **)&a.Init = sym(dl, "nvmlInit_v2", "nvmlInit");
    *(void **)&a.Shutdown = sym(dl, "nvmlShutdown", NULL);
    *(void **)&a.Count = sym(dl, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
    *(void **)&a.ByIndex = sym(dl, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
    *(void **)&a.ByPciBusId = sym(dl, "nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetHandleByPciBusId");
    *(void **)&a.ErrorString = sym(dl, "nvmlErrorString", NULL);
    *(void **)&a.LinkState = sym(dl, "nvmlDeviceGetNvLinkState", NULL);
    *(void **)&a.P2P = sym(dl, "nvmlDeviceGetP2PStatus", NULL);
    *(void **)&a.Ancestor = sym(dl, "nvmlDeviceGetTopologyCommonAncestor", NULL);
    *(void **)&a.Pci = sym(dl, "nvmlDeviceGetPciInfo_v3", NULL);   /* the _v3 layout only */
    *(void **)&a.RemotePci = sym(dl, "nvmlDeviceGetNvLinkRemotePciInfo_v2", NULL);
    *(void **)&a.RemoteType = sym(dl, "nvmlDeviceGetNvLinkRemoteDeviceType", NULL);
    nvml_ret r = -1;
    if (!a.Init || !a.Shutdown || !a.Count || !a.ByIndex || !a.ByPciBusId)
        snprintf(out->why, sizeof out->why, "NVML unavailable: %s lacks nvmlInit_v2/nvmlDeviceGetCount_v2/"
                 "nvmlDeviceGetHandleByIndex_v2/nvmlDeviceGetHandleByPciBusId_v2", path);
    else if ((r = a.Init()) != 0)
        fail(&a, r, out->why, sizeof out->why, "NVML unavailable: nvmlInit_v2");
    else {
        read_with(&a, cuda_ids, cuda_ids ? n_cuda : -1, cuda_why ? cuda_why : "not given", out);
        a.Shutdown();
    }
    dlclose(dl);
}
