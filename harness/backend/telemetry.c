/* telemetry.c - the throttle rule and reason names (see telemetry.h). */
#include "backend/telemetry.h"

#include "core/kb.h"

#include <stdio.h>

int kb_telemetry_throttled(int sm_clock_mhz, int sm_clock_max_mhz, uint64_t reasons)
{
    if (reasons & KB_TEL_THROTTLE_MASK)
        return 1;
    return sm_clock_mhz > 0 && sm_clock_max_mhz > 0 &&
           sm_clock_mhz < KB_TEL_MIN_CLOCK_FRACTION * sm_clock_max_mhz;
}

static const char *const reason_names[] = {
    "gpu_idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown", "sync_boost",
    "sw_thermal_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown", "display_clock_setting",
};
_Static_assert(sizeof reason_names / sizeof reason_names[0] == 9, "one name per KB_TEL_REASON_* bit");

int kb_telemetry_reason_names(uint64_t reasons, char *buf, size_t len)
{
    kb_sb b;
    kb_sb_init(&b);
    if (reasons == 0)
        kb_sb_printf(&b, "none");
    for (int i = 0; i < 64; i++) {
        uint64_t bit = 1ull << i;
        if (!(reasons & bit))
            continue;
        if (i < 9)
            kb_sb_printf(&b, "%s%s", b.len ? "," : "", reason_names[i]);
        else
            kb_sb_printf(&b, "%s0x%llx", b.len ? "," : "", (unsigned long long)bit);
    }
    int need = (int)b.len;
    if (len)
        snprintf(buf, len, "%s", b.s);
    kb_sb_free(&b);
    return need;
}
