/* emu_host.h - what the emulator reports about the machine it runs on: the CPU's name
 * and the cache that plays the part of a GPU's L2 (the one a cold-L2 flush evicts). */
#ifndef KB_EMU_HOST_H
#define KB_EMU_HOST_H

#include <stddef.h>

/* Largest cache size [bytes] listed in dir/index<N>/size ("48K", "2048K", "32M"); 0 if
 * none (dir: a sysfs CPU cache directory such as /sys/devices/system/cpu/cpu0/cache). */
size_t kb_emu_host_cache_bytes(const char *dir);

/* The emulator's "L2" [bytes]: the largest host cache under dir (NULL: cpu0's sysfs),
 * capped at KB_EMU_L2_CAP_BYTES, and the cap when sysfs says nothing. Why the cap: a
 * server's shared L3 is hundreds of MiB and mostly other cores'; evicting all of it
 * before every sample would cost far more than the case. The cap evicts the private
 * levels and this core's working share of L3. Emulator timings are CPU time either way. */
#define KB_EMU_L2_CAP_BYTES (32u << 20)
size_t kb_emu_l2_bytes(const char *dir);

/* The CPU's model name from /proc/cpuinfo into buf ("unknown CPU" when not found). */
void kb_emu_cpu_name(char *buf, size_t n);

#endif /* KB_EMU_HOST_H */
