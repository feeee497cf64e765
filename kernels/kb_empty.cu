/* kb_empty.cu - an empty kernel: the launch-overhead floor (harness/launch_overhead.c).
 *
 * It does no work, so timing N launches of it measures nothing but launching: the
 * eager per-launch cost and what remains of it inside a CUDA Graph. It is compiled
 * through the backend and the compile cache like any family's module (NVRTC on the
 * GPU, the host compiler on the emulator), so the floor is measured with the same
 * toolchain, module loading and launch path as the cases it calibrates.
 */
#include "kb_device.h"

extern "C" __global__ void kb_empty() {}
