/* nvtx.c - NVTX ranges (see nvtx.h). The one file that includes the NVTX header, so
 * its static implementation is compiled once. */
#include "engine/nvtx.h"

#include <nvtx3/nvToolsExt.h>

void kb_nvtx_push(const char *name)
{
    nvtxRangePushA(name ? name : "");
}

void kb_nvtx_pop(void)
{
    nvtxRangePop();
}
