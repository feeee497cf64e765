/* devices.c - `kbench devices`: the device a backend drives (a session's), its
 * properties and peaks. */
#include "cli/devices.h"

#include "results/ceilings.h"
#include "results/store.h"

#include <stdlib.h>

#include <stdio.h>
#include <string.h>

/* The properties a GPU (KB_CAP_FULL_SPEED) or the emulator reports. */
static void print_device(const char *backend, int index, const kb_device_info *d, int target_sm)
{
    int gpu = d->caps & KB_CAP_FULL_SPEED;
    printf("backend        %s\n", backend);
    printf("device         %d: %s\n", index, d->name);
    printf("uuid           %s\n", d->uuid);
    if (d->pci_bus_id[0])
        printf("pci bus id     %s\n", d->pci_bus_id);
    if (gpu)
        printf("arch           sm_%d (compute capability %d.%d)\n", d->sm, d->sm / 10, d->sm % 10);
    else   /* the emulator's device is the architecture it emulates, sm_90a included */
        printf("arch           %s (emulated)\n", kb_arch_name(target_sm));
    printf("%-14s %d\n", gpu ? "SMs" : "workers", d->sm_count);
    if (gpu) {
        printf("sm clock       %d MHz\n", d->clock_khz / 1000);
        printf("memory clock   %d MHz, bus %d bits\n", d->mem_clock_khz / 1000, d->mem_bus_bits);
        printf("L2             %d KiB\n", d->l2_bytes / 1024);
        printf("memory         %.1f GiB\n", d->total_mem_bytes / (1024.0 * 1024 * 1024));
    }
    if (gpu && target_sm != d->sm)   /* --arch, or the nearest target of a cc the table lacks */
        printf("compiled for   %s\n", kb_arch_name(target_sm));
    printf("smem/block     %d KiB (opt-in)\n", d->max_shmem_per_block_optin / 1024);
    if (d->driver_version)
        printf("driver         CUDA %d.%d (%d)\n", d->driver_version / 1000, d->driver_version % 1000 / 10,
               d->driver_version);
    if (d->toolchain_note[0])
        printf("nvrtc          %s%s\n", d->toolchain_unusable ? "DOES NOT FIT: " : "", d->toolchain_note);
    const char *line = d->vendor_note;
    for (int first = 1; *line; first = 0) {   /* one line per vendor library */
        size_t len = strcspn(line, "\n");
        printf("%-14s %.*s\n", first ? "vendor libs" : "", (int)len, line);
        line += len + (line[len] == '\n');
    }
    if (d->tma_note[0])
        printf("tensor maps    %s\n", d->tma_note);
    if (!(d->caps & KB_CAP_GPU_TIMER))
        printf("note           the emulator executes kernels on the CPU; its timings are CPU time\n");
}

int kb_cmd_devices(const kb_run_opts *o)
{
    kb_session_opts so;
    if (kb_run_session_opts(o, &so) != 0)
        return KB_EXIT_INPUT;
    /* as run does: auto is the GPU when the driver has one, else the emulator with one line
     * saying why; --backend cuda asks the driver only, and says so plainly when it has none */
    so.backend = o->backend;
    so.keep_unusable = 1;      /* shown below, not refused */
    kb_session *s;
    kb_sb msg;
    kb_sb_init(&msg);
    kb_status st = kb_session_open(&so, &s, &msg);
    if (st != KB_OK) {
        fprintf(stderr, "kbench: %s\n", msg.s);
        if (st == KB_ERR_INPUT) {   /* an --arch the device cannot load, or the NVRTC lacks: the line is wrong */
            kb_sb_free(&msg);
            return KB_EXIT_INPUT;
        }
        if (!strcmp(so.backend, "cuda") && !strstr(msg.s, "device query: "))
            fprintf(stderr, "kbench: no GPU can be used here; the CPU emulator can run and verify every kernel: "
                            "kbench devices --backend emu\n");
        kb_sb_free(&msg);
        return KB_EXIT_SETUP;
    }
    if (kb_session_peaks_file_check(&msg) != KB_OK) {   /* a broken peaks file is named, exit 3 */
        fprintf(stderr, "kbench devices: %s\n", msg.s);
        kb_sb_free(&msg);
        kb_session_close(s);
        return KB_EXIT_SETUP;
    }
    const kb_device_info *d = kb_session_device(s);
    print_device(kb_session_backend_name(s), o->device_index, d, kb_session_target_sm(s));
    kb_sb text, note;
    kb_sb_init(&text);
    kb_sb_init(&note);
    if (kb_session_peaks_text(s, &text, &note) == KB_OK) {
        printf("\n");
        fputs(text.s, stdout);
    } else {
        printf("peaks          %s\n", note.s);
    }
    kb_sb_free(&text);
    kb_sb_free(&note);
    kb_sb_free(&msg);
    /* measured ceilings, when a ceilings run of this device is in the store */
    if (!kb_ceilings_print(kb_store_default_path(), d, stdout))
        printf("\n  measured ceilings: none in the store (kbench run suites/ceilings.yaml measures them)\n");
    kb_session_close(s);
    return KB_EXIT_OK;
}

static const kb_opt devices_opts[] = { KB_ROW_BACKEND, KB_ROW_DEVICE, KB_ROW_ARCH };

static int devices_main(void *o) { return kb_cmd_devices(o); }

const kb_command kb_command_devices = {
    "devices", "", 0, 0, 0,
    "the device the backend drives, with its properties, peaks and measured ceilings",
    "  without --backend (auto): the GPU the CUDA driver has, else - as kbench run - the CPU emulator, with one\n"
    "  line saying why; --backend cuda: the GPU only (exit 3, saying why, when there is none)\n",
    devices_opts, (int)(sizeof devices_opts / sizeof devices_opts[0]), sizeof(kb_run_opts), kb_run_opts_defaults,
    devices_main,
};
