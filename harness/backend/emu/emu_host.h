/* emu_host.h - what the emulator reports about the machine it runs on: the CPU's name
 * and the cache that plays the part of a GPU's L2 (the one a cold-L2 flush evicts). */
#ifndef KB_EMU_HOST_H
#define KB_EMU_HOST_H

#include <stddef.h>

/* Largest cache size [bytes] listed in dir/index<N>/size ("48K", "2048K", "32M"); 0 if
 * none (dir: a sysfs CPU cache directory such as /sys/devices/system/cpu/cpu0/cache). */
size_t kb_emu_host_cache_bytes(const char *dir);

/* The emulator's "L2" [bytes]: the largest host cache under dir (NULL: cpu0's sysfs) of
 * level KB_EMU_L2_LEVEL or below - a core's own caches, which a cold-L2 flush (twice this,
 * engine/measure.h) evicts before every sample; the largest cache of any level when sysfs
 * gives no levels; KB_EMU_L2_FALLBACK_BYTES when it says nothing; at most
 * KB_EMU_L2_CAP_BYTES.
 * Why not the shared L3: a server's is hundreds of MiB and mostly other cores' (480 MiB on
 * this project's machine), so no affordable flush evicts it, and overwriting 64 MiB before
 * every sample was 40% of the CPU time of `kbench run suites/llm.yaml` on the emulator
 * (perf, issue 26) for inputs of a check shape that fit a core's own L2 anyway. Emulator
 * timings are CPU time either way. */
#define KB_EMU_L2_LEVEL 2
#define KB_EMU_L2_FALLBACK_BYTES (2u << 20)
#define KB_EMU_L2_CAP_BYTES (32u << 20)
size_t kb_emu_l2_bytes(const char *dir);

/* The CPU's model name from /proc/cpuinfo into buf ("unknown CPU" when not found). */
void kb_emu_cpu_name(char *buf, size_t n);

#endif /* KB_EMU_HOST_H */
