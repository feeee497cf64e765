/* emu_host.c - the host CPU's name and caches (see emu_host.h). */
#include "backend/emu/emu_host.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>

/* The size [bytes] in dir/<index>/size ("48K", "2048K", "32M"), 0 when unreadable. */
static size_t read_size(const char *dir, const char *index)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s/size", dir, index);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    unsigned long long v = 0;
    char unit = 0;
    int got = fscanf(f, "%llu%c", &v, &unit);
    fclose(f);
    if (got < 1)
        return 0;
    if (got == 2 && (unit == 'K' || unit == 'k'))
        v <<= 10;
    else if (got == 2 && (unit == 'M' || unit == 'm'))
        v <<= 20;
    else if (got == 2 && (unit == 'G' || unit == 'g'))
        v <<= 30;
    return (size_t)v;
}

/* The level in dir/<index>/level, 0 when absent or unreadable. */
static int read_level(const char *dir, const char *index)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s/level", dir, index);
    FILE *f = fopen(path, "r");
    int level = 0;
    if (f) {
        if (fscanf(f, "%d", &level) != 1)
            level = 0;
        fclose(f);
    }
    return level;
}

/* The largest cache under dir whose level is at most max_level (0: any level). */
static size_t largest_cache(const char *dir, int max_level)
{
    size_t best = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, "index", 5) != 0)
            continue;
        if (max_level > 0) {
            int level = read_level(dir, e->d_name);
            if (level < 1 || level > max_level)
                continue;
        }
        size_t v = read_size(dir, e->d_name);
        if (v > best)
            best = v;
    }
    closedir(d);
    return best;
}

size_t kb_emu_host_cache_bytes(const char *dir) { return largest_cache(dir, 0); }

size_t kb_emu_l2_bytes(const char *dir)
{
    if (!dir)
        dir = "/sys/devices/system/cpu/cpu0/cache";
    size_t own = largest_cache(dir, KB_EMU_L2_LEVEL);
    if (own == 0)
        own = largest_cache(dir, 0);   /* no level files: the largest cache listed */
    if (own == 0)
        return KB_EMU_L2_FALLBACK_BYTES;
    return own > KB_EMU_L2_CAP_BYTES ? KB_EMU_L2_CAP_BYTES : own;
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
