/* nvrtc_toolkit.h - reach the CUDA Toolkit's <nvrtc.h>, which harness/nvrtc.h shadows.
 *
 * harness/ is the first directory on kbcore's include path, so <nvrtc.h> names
 * kbench's own header. Included as <nvrtc_toolkit.h> (angle brackets: found
 * through the include path, in harness/), #include_next resumes the search
 * after harness/ and reaches the toolkit's header. Only harness/nvrtc.c needs it.
 */
#ifndef KB_NVRTC_TOOLKIT_H
#define KB_NVRTC_TOOLKIT_H

#include_next <nvrtc.h>

#ifndef __NVRTC_H__
#error "the CUDA Toolkit's nvrtc.h was not reached: include this file as <nvrtc_toolkit.h>"
#endif

#endif /* KB_NVRTC_TOOLKIT_H */
