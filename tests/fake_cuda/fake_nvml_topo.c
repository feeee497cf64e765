/* fake_nvml_topo.c - the NVML double's node (part of kbench_fake_nvml, libnvidia-ml.so.1):
 * the GPUs, their NVLink links and each pair's path, for `kbench accept --system` on the cuda
 * backend (backend/cuda/nvml_topo.h), with faults to inject:
 *   KBENCH_FAKE_NVML_GPUS       GPUs counted (default 8)
 *   KBENCH_FAKE_NVML_TOPO       nvswitch (default: every pair NVLink, as an HGX board) or pcie (no
 *                               NVLink: nvmlDeviceGetNvLinkState NOT_SUPPORTED)
 *   KBENCH_FAKE_NVML_NVLINKS    links per GPU under nvswitch (default 18)
 *   KBENCH_FAKE_NVML_LINK_DOWN  "gpu:link,...": those links inactive (isActive 0), e.g. "3:7"
 *   KBENCH_FAKE_NVML_PAIR       "a-b:PATH,...": that pair is not NVLink but PIX, PXB, PHB, NODE or SYS
 *                               (nvmlDeviceGetP2PStatus NVLink NOT_SUPPORTED, the common ancestor that)
 * Without NVLink, the common ancestor of a pair is NODE in one half of the GPUs, SYS across the
 * halves (two CPU sockets). Levels as nvml.h: SINGLE 10, MULTIPLE 20, HOSTBRIDGE 30, NODE 40,
 * SYSTEM 50; nvmlGpuP2PStatus_t 0 OK, 5 NOT_SUPPORTED; P2P index 2 NVLINK. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fake_nvml_device *nvml_device;
#define EXPORT __attribute__((visibility("default")))
#define MAX_GPUS 16

int nvmlDeviceGetCount_v2(unsigned *n);
int nvmlDeviceGetHandleByIndex_v2(unsigned i, nvml_device *d);
int nvmlDeviceGetNvLinkState(nvml_device d, unsigned link, int *active);
int nvmlDeviceGetP2PStatus(nvml_device a, nvml_device b, int index, int *status);
int nvmlDeviceGetTopologyCommonAncestor(nvml_device a, nvml_device b, int *level);

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
    if (!nvswitch())
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
    *status = index == 2 && nvswitch() && x != y && !pair_override(x, y) ? 0 : 5;
    return 0;
}

EXPORT int nvmlDeviceGetTopologyCommonAncestor(nvml_device a, nvml_device b, int *level)
{
    int x = gpu_of(a), y = gpu_of(b), half = (n_gpus() + 1) / 2;
    if (x < 0 || y < 0 || !level)
        return 2;
    int o = pair_override(x, y);
    *level = o ? o : x == y ? 0 : (x < half) == (y < half) ? 40 : 50;
    return 0;
}
