/* fake_nvml_topo.c - the NVML double's node (part of kbench_fake_nvml, libnvidia-ml.so.1):
 * the GPUs, their NVLink links and each pair's path, for `kbench accept --system` on the cuda
 * backend (backend/cuda/nvml_topo.h), with faults to inject:
 *   KBENCH_FAKE_NVML_GPUS       GPUs counted (default 8)
 *   KBENCH_FAKE_NVML_TOPO       nvswitch (default: every pair NVLink, as an HGX board: each link's
 *                               remote end an NVSwitch), pcie (no NVLink: nvmlDeviceGetNvLinkState
 *                               NOT_SUPPORTED) or mesh (GPU-to-GPU links, KBENCH_FAKE_NVML_BRIDGES)
 *   KBENCH_FAKE_NVML_BRIDGES    mesh: "a-b:k,...": k links between GPUs a and b (each GPU's links
 *                               numbered in the list's order; a pair with none is not NVLink)
 *   KBENCH_FAKE_NVML_NVLINKS    links per GPU under nvswitch (default 18)
 *   KBENCH_FAKE_NVML_LINK_DOWN  "gpu:link,...": those links inactive (isActive 0), e.g. "3:7"
 *   KBENCH_FAKE_NVML_PAIR       "a-b:PATH,...": that pair is not NVLink but PIX, PXB, PHB, NODE or SYS
 *                               (nvmlDeviceGetP2PStatus NVLink NOT_SUPPORTED, the common ancestor that)
 *   KBENCH_FAKE_NVML_TOPO_FAIL  "function,...": those of nvmlDeviceGetNvLinkState,
 *                               nvmlDeviceGetTopologyCommonAncestor, nvmlDeviceGetNvLinkRemotePciInfo_v2
 *                               return 15 (NVML_ERROR_GPU_IS_LOST) for every GPU
 * Without NVLink, the common ancestor of a pair is NODE in one half of the GPUs, SYS across the
 * halves (two CPU sockets). Levels as nvml.h: SINGLE 10, MULTIPLE 20, HOSTBRIDGE 30, NODE 40,
 * SYSTEM 50; nvmlGpuP2PStatus_t 0 OK, 5 NOT_SUPPORTED; P2P index 2 NVLINK. Each GPU's PCI
 * address (NVML's index order is the PCI order, as a real NVML's) is 0000:(0x10 + 8 i):00.0, or
 *   KBENCH_FAKE_NVML_BUS_IDS    "domain:bus:device.function,..." per NVML index (hex, e.g.
 *                               "0001:3b:00.0,0001:5e:00.0"); set, nvmlDeviceGetHandleByPciBusId_v2
 *                               finds only those (NOT_FOUND for another id: fake_nvml.c)
 * (nvmlDeviceGetPciInfo_v3 of fake_nvml.c asks fake_topo_pci, nvmlDeviceGetHandleByPciBusId_v2
 * fake_topo_find), an NVSwitch's 0000:(0xA0 + link % 4):00.0; nvmlDeviceGetNvLinkRemoteDeviceType
 * says GPU (0) or SWITCH (2), nvmlDeviceGetNvLinkRemotePciInfo_v2 the remote end's address. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fake_nvml_device *nvml_device;
#define EXPORT __attribute__((visibility("default")))
#define MAX_GPUS 16
#define KBENCH_MESH_MAX_LINKS 18

int nvmlDeviceGetCount_v2(unsigned *n);
int nvmlDeviceGetHandleByIndex_v2(unsigned i, nvml_device *d);
int nvmlDeviceGetNvLinkState(nvml_device d, unsigned link, int *active);
int nvmlDeviceGetP2PStatus(nvml_device a, nvml_device b, int index, int *status);
int nvmlDeviceGetTopologyCommonAncestor(nvml_device a, nvml_device b, int *level);
int nvmlDeviceGetNvLinkRemoteDeviceType(nvml_device d, unsigned link, int *type);
int nvmlDeviceGetNvLinkRemotePciInfo_v2(nvml_device d, unsigned link, void *pci);
__attribute__((visibility("hidden"))) int fake_topo_pci(const void *d, void *pci);
__attribute__((visibility("hidden"))) void *fake_topo_find(const char *bus_id);
__attribute__((visibility("hidden"))) int fake_topo_gpu(const void *d);

static char gpu_obj[MAX_GPUS];

static int n_gpus(void)
{
    const char *s = getenv("KBENCH_FAKE_NVML_GPUS");
    int n = s && *s ? atoi(s) : 8;
    return n < 1 ? 1 : n > MAX_GPUS ? MAX_GPUS : n;
}

static int gpu_of(nvml_device d)
{
    int i = (int)((char *)d - gpu_obj);
    return d && i >= 0 && i < n_gpus() ? i : -1;
}

static int nvswitch(void)
{
    const char *s = getenv("KBENCH_FAKE_NVML_TOPO");
    return !s || !*s || !strcmp(s, "nvswitch");
}

/* The path KBENCH_FAKE_NVML_PAIR gives pair (a, b) as an NVML level, or 0 when none. */
static int pair_override(int a, int b)
{
    static const struct { const char *name; int level; } levels[] = {
        { "PIX", 10 }, { "PXB", 20 }, { "PHB", 30 }, { "NODE", 40 }, { "SYS", 50 } };
    const char *s = getenv("KBENCH_FAKE_NVML_PAIR");
    while (s && *s) {
        int x, y, used = 0;
        char word[8] = "";
        if (sscanf(s, "%d-%d:%7[A-Z]%n", &x, &y, word, &used) == 3 && ((x == a && y == b) || (x == b && y == a)))
            for (size_t k = 0; k < sizeof levels / sizeof levels[0]; k++)
                if (!strcmp(word, levels[k].name))
                    return levels[k].level;
        s = strchr(s, ',');
        s = s ? s + 1 : NULL;
    }
    return 0;
}

static int mesh(void)
{
    const char *s = getenv("KBENCH_FAKE_NVML_TOPO");
    return s && !strcmp(s, "mesh");
}

/* mesh: the peer of GPU g's link `link` (-1: no such link); *total = g's links. */
static int mesh_peer(int g, unsigned link, unsigned *total)
{
    const char *s = getenv("KBENCH_FAKE_NVML_BRIDGES");
    int peer = -1;
    *total = 0;
    while (s && *s) {
        int x, y;
        unsigned k;
        if (sscanf(s, "%d-%d:%u", &x, &y, &k) == 3 && (x == g || y == g) && x != y) {
            if (link >= *total && link < *total + k)
                peer = x == g ? y : x;
            *total += k;
        }
        s = strchr(s, ',');
        s = s ? s + 1 : NULL;
    }
    return peer;
}

typedef struct { unsigned domain, bus, device, function; } pci_addr;

/* An id in the forms nvmlDeviceGetHandleByPciBusId_v2 accepts (hex): domain:bus:device.function,
 * domain:bus:device, bus:device.function. 0, or -1 when it is none of them. */
static int parse_id(const char *s, pci_addr *p)
{
    int used = -1;
    memset(p, 0, sizeof p[0]);
    if (sscanf(s, "%x:%x:%x.%x%n", &p->domain, &p->bus, &p->device, &p->function, &used) == 4 && !s[used])
        return 0;
    used = -1;
    if (sscanf(s, "%x:%x:%x%n", &p->domain, &p->bus, &p->device, &used) == 3 && !s[used])
        return 0;
    used = -1;
    p->domain = 0;
    if (sscanf(s, "%x:%x.%x%n", &p->bus, &p->device, &p->function, &used) == 3 && !s[used])
        return 0;
    return -1;
}

/* GPU g's address: the g-th of KBENCH_FAKE_NVML_BUS_IDS, else 0000:(0x10 + 8 g):00.0. */
static pci_addr gpu_addr(int g)
{
    pci_addr p = { 0, 0x10u + 8u * (unsigned)g, 0, 0 };
    const char *s = getenv("KBENCH_FAKE_NVML_BUS_IDS");
    for (int i = 0; s && *s && i < g; i++)
        s = strchr(s, ',') ? strchr(s, ',') + 1 : NULL;
    char one[40] = "";
    if (s && *s && sscanf(s, "%39[^,]", one) == 1 && parse_id(one, &p) != 0)
        p = (pci_addr){ 0xffffu, 0xffu, 0x1fu, 7 };   /* malformed: an address nobody has */
    return p;
}

/* nvmlPciInfo_t (_v3): busIdLegacy[16], domain, bus, device, pciDeviceId, pciSubSystemId, busId[32] */
static void put_pci(pci_addr a, void *pci)
{
    struct { char legacy[16]; unsigned domain, bus, device, id, subsystem; char bus_id[32]; } p;
    memset(&p, 0, sizeof p);
    p.domain = a.domain;
    p.bus = a.bus;
    p.device = a.device;
    snprintf(p.legacy, sizeof p.legacy, "%04X:%02X:%02X.%X", a.domain & 0xffffu, a.bus, a.device, a.function);
    snprintf(p.bus_id, sizeof p.bus_id, "%08X:%02X:%02X.%X", a.domain, a.bus, a.device, a.function);
    p.id = 0x233010deu;
    memcpy(pci, &p, sizeof p);
}

int fake_topo_pci(const void *d, void *pci)
{
    int g = gpu_of((nvml_device)(uintptr_t)d);
    if (g < 0 || !pci)
        return -1;
    put_pci(gpu_addr(g), pci);
    return 0;
}

int fake_topo_gpu(const void *d) { return gpu_of((nvml_device)(uintptr_t)d); }

void *fake_topo_find(const char *bus_id)
{
    pci_addr p;
    if (!bus_id || parse_id(bus_id, &p) != 0)
        return NULL;
    for (int g = 0; g < n_gpus(); g++) {
        pci_addr a = gpu_addr(g);
        if (a.domain == p.domain && a.bus == p.bus && a.device == p.device && a.function == p.function)
            return &gpu_obj[g];
    }
    return NULL;
}

/* 15 (NVML_ERROR_GPU_IS_LOST) when fn is listed in KBENCH_FAKE_NVML_TOPO_FAIL, else 0. */
static int injected(const char *fn)
{
    const char *s = getenv("KBENCH_FAKE_NVML_TOPO_FAIL");
    size_t n = strlen(fn);
    for (; s && *s; s = strchr(s, ',') ? strchr(s, ',') + 1 : NULL)
        if (!strncmp(s, fn, n) && (s[n] == ',' || !s[n]))
            return 15;
    return 0;
}

static int link_down(int gpu, unsigned link)
{
    const char *s = getenv("KBENCH_FAKE_NVML_LINK_DOWN");
    while (s && *s) {
        int g;
        unsigned l;
        if (sscanf(s, "%d:%u", &g, &l) == 2 && g == gpu && l == link)
            return 1;
        s = strchr(s, ',');
        s = s ? s + 1 : NULL;
    }
    return 0;
}

EXPORT int nvmlDeviceGetCount_v2(unsigned *n)
{
    if (!n)
        return 2;
    *n = (unsigned)n_gpus();
    return 0;
}

EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned i, nvml_device *d)
{
    if (!d || i >= (unsigned)n_gpus())
        return 2;
    *d = (nvml_device)&gpu_obj[i];
    return 0;
}

EXPORT int nvmlDeviceGetNvLinkState(nvml_device d, unsigned link, int *active)
{
    int g = gpu_of(d);
    const char *s = getenv("KBENCH_FAKE_NVML_NVLINKS");
    unsigned links = s && *s ? (unsigned)atoi(s) : 18;
    if (g < 0 || !active)
        return 2;
    if (injected("nvmlDeviceGetNvLinkState"))
        return 15;
    if (mesh())
        mesh_peer(g, link, &links);
    else if (!nvswitch())
        return 3;
    if (link >= links)
        return 2;
    *active = !link_down(g, link);
    return 0;
}

EXPORT int nvmlDeviceGetP2PStatus(nvml_device a, nvml_device b, int index, int *status)
{
    int x = gpu_of(a), y = gpu_of(b);
    if (x < 0 || y < 0 || !status)
        return 2;
    unsigned total = 0;
    int bridged = 0;
    for (unsigned l = 0; mesh() && l < KBENCH_MESH_MAX_LINKS; l++)
        bridged |= mesh_peer(x, l, &total) == y;
    *status = index == 2 && (nvswitch() || bridged) && x != y && !pair_override(x, y) ? 0 : 5;
    return 0;
}

EXPORT int nvmlDeviceGetNvLinkRemoteDeviceType(nvml_device d, unsigned link, int *type)
{
    unsigned total = 0;
    int g = gpu_of(d);
    if (g < 0 || !type)
        return 2;
    if (mesh())
        return mesh_peer(g, link, &total) < 0 ? 2 : (*type = 0, 0);
    if (!nvswitch())
        return 3;
    *type = 2;
    return 0;
}

EXPORT int nvmlDeviceGetNvLinkRemotePciInfo_v2(nvml_device d, unsigned link, void *pci)
{
    unsigned total = 0;
    int g = gpu_of(d), peer = g >= 0 && mesh() ? mesh_peer(g, link, &total) : -1;
    if (g < 0 || !pci)
        return 2;
    if (injected("nvmlDeviceGetNvLinkRemotePciInfo_v2"))
        return 15;
    if (mesh() && peer < 0)
        return 2;
    if (!mesh() && !nvswitch())
        return 3;
    put_pci(peer >= 0 ? gpu_addr(peer) : (pci_addr){ 0, 0xA0u + link % 4, 0, 0 }, pci);
    return 0;
}

EXPORT int nvmlDeviceGetTopologyCommonAncestor(nvml_device a, nvml_device b, int *level)
{
    int x = gpu_of(a), y = gpu_of(b), half = (n_gpus() + 1) / 2;
    if (x < 0 || y < 0 || !level)
        return 2;
    if (injected("nvmlDeviceGetTopologyCommonAncestor"))
        return 15;
    int o = pair_override(x, y);
    *level = o ? o : x == y ? 0 : (x < half) == (y < half) ? 40 : 50;
    return 0;
}
