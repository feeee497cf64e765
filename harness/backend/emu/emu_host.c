/* emu_host.c - the host CPU's name and caches (see emu_host.h). */
#include "backend/emu/emu_host.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>

size_t kb_emu_host_cache_bytes(const char *dir)
{
    size_t best = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, "index", 5) != 0)
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s/size", dir, e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        unsigned long long v = 0;
        char unit = 0;
        int got = fscanf(f, "%llu%c", &v, &unit);
        fclose(f);
        if (got < 1)
            continue;
        if (got == 2 && (unit == 'K' || unit == 'k'))
            v <<= 10;
        else if (got == 2 && (unit == 'M' || unit == 'm'))
            v <<= 20;
        else if (got == 2 && (unit == 'G' || unit == 'g'))
            v <<= 30;
        if (v > best)
            best = (size_t)v;
    }
    closedir(d);
    return best;
}

size_t kb_emu_l2_bytes(const char *dir)
{
    size_t host = kb_emu_host_cache_bytes(dir ? dir : "/sys/devices/system/cpu/cpu0/cache");
    return host == 0 || host > KB_EMU_L2_CAP_BYTES ? KB_EMU_L2_CAP_BYTES : host;
}

void kb_emu_cpu_name(char *buf, size_t n)
{
    char line[256];
    snprintf(buf, n, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            snprintf(buf, n, "%s", colon + 2);
            buf[strcspn(buf, "\n")] = 0;
            break;
        }
    }
    if (f)
        fclose(f);
}
