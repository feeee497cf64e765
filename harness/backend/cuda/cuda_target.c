/* cuda_target.c - the architecture the cuda backend compiles for (see cuda_target.h). */
#include "backend/cuda/cuda_target.h"
#include "backend/cuda/kb_nvrtc_lib.h"

#include <stdarg.h>
#include <stdio.h>

static void set_err(kb_backend_ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_err(kb_backend_ctx *x, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->err, sizeof x->err, fmt, ap);
    va_end(ap);
}

/* The architecture kernels are compiled for: --arch when given, else the first of the
 * device's defaults (kb_arch_defaults: sm_90a on a 9.0 device, else the newest plain target
 * whose CUBIN loads on it, e.g. sm_86 for an 8.7 device) that the chosen NVRTC compiles for.
 * When it compiles for none of them the first is kept and check_nvrtc_arch marks the toolchain
 * unusable with NVRTC's list. Refused before any case, with the reason, when --arch's CUBIN
 * would not load here (an `a` target of another cc, a newer major) or when kbench has no
 * target for the device. */
static kb_status choose_target(kb_backend_ctx *x, int sm_override)
{
    kb_device_info *d = &x->info;
    char why[768];
    int cand[KB_ARCH_COUNT];
    if (sm_override > 0) {
        if (!kb_arch_runs_on(sm_override, d->sm, why, sizeof why)) {
            set_err(x, "--arch %s: %s", kb_arch_name(sm_override), why);
            return KB_ERR_INPUT;
        }
        d->target_sm = sm_override;
        return KB_OK;
    }
    int n = kb_arch_defaults(d->sm, cand, KB_ARCH_COUNT);
    if (n == 0) {
        set_err(x, "%s is compute capability %d.%d: kbench has no architecture whose CUBIN loads on it (%s)", d->name,
                d->sm / 10, d->sm % 10, kb_arch_list(why, sizeof why, NULL, NULL));
        return KB_ERR_SETUP;
    }
    d->target_sm = cand[0];
    for (int i = 0; i < n && !d->toolchain_unusable; i++)
        if (kb_nvrtc_supports(cand[i], why, sizeof why) == 1) {
            d->target_sm = cand[i];
            break;
        }
    return KB_OK;
}

/* Choose the NVRTC this driver can load CUBINs of; when none fits the device is still
 * described (kbench devices shows why) but marked unusable, and run stops with exit 3. */
static void choose_nvrtc(kb_backend_ctx *x)
{
    kb_device_info *d = &x->info;
    char note[sizeof d->toolchain_note - 64];
    if (kb_nvrtc_lib_select(x->driver_version, note, sizeof note) == KB_OK) {
        snprintf(d->toolchain_note, sizeof d->toolchain_note, "%s; its CUBINs load on this driver", note);
        return;
    }
    d->toolchain_unusable = 1;
    snprintf(d->toolchain_note, sizeof d->toolchain_note, "%s", note);
}

/* --arch (or the device's own target) must be one the chosen NVRTC compiles for, read at
 * run time (nvrtcGetSupportedArchs): --arch otherwise is KB_ERR_INPUT with NVRTC's list; the
 * device's own otherwise leaves the device described but its toolchain unusable (run stops
 * with exit 3 and the note, `kbench devices` shows it). */
static kb_status check_nvrtc_arch(kb_backend_ctx *x, int sm_override)
{
    char why[768];
    kb_device_info *d = &x->info;
    if (d->toolchain_unusable || kb_nvrtc_supports(d->target_sm, why, sizeof why) != 0)
        return KB_OK;   /* no usable NVRTC: run stops with the toolchain note instead */
    if (sm_override) {
        set_err(x, "--arch %s: %s", kb_arch_name(d->target_sm), why);
        return KB_ERR_INPUT;
    }
    d->toolchain_unusable = 1;
    snprintf(d->toolchain_note, sizeof d->toolchain_note, "%.400s (the device's own architecture)", why);
    return KB_OK;
}

kb_status kb_cuda_choose_target(kb_backend_ctx *x, int sm_override)
{
    choose_nvrtc(x);
    kb_status st = choose_target(x, sm_override);
    return st != KB_OK ? st : check_nvrtc_arch(x, sm_override);
}
