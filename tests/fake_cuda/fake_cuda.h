/* fake_cuda.h - the driver double: a stand-in libcuda.so.1 (CMake target kbench_fake_cuda,
 * build/fake-driver/libcuda.so.1) that kbench loads through KBENCH_LIBCUDA. It executes no
 * kernel; it enforces the Driver API's documented contract instead of accepting anything,
 * and keeps a deterministic virtual clock so tests can assert what the timing code computes.
 *
 * The contract it enforces (the error a real driver documents for each breach):
 *   - cuInit first (CUDA_ERROR_NOT_INITIALIZED); a current context on the calling thread
 *     for every context call (CUDA_ERROR_INVALID_CONTEXT); handles it made and has not
 *     destroyed (CUDA_ERROR_INVALID_HANDLE; device pointers: CUDA_ERROR_INVALID_VALUE,
 *     and copies/fills inside an allocation);
 *   - module images are CUBINs parsed by fake_cubin.c: not a CUBIN -> INVALID_IMAGE; built
 *     for another major arch or a newer minor than the device -> NO_BINARY_FOR_GPU; built by
 *     a toolkit of a newer CUDA major than the driver -> UNSUPPORTED_PTX_VERSION (*assumed*:
 *     what users report for newer-toolkit images; no document names the code for a CUBIN);
 *     cuModuleGetFunction of a name the image lacks -> NOT_FOUND;
 *   - launches: block <= 1024 threads and <= the entry's __launch_bounds__, block dims
 *     <= 1024 x 1024 x 64, grid x < 2^31, y and z <= 65535, dynamic shared memory <= the
 *     function's MAX_DYNAMIC_SHARED_SIZE_BYTES (default 48 KiB - static), which may be
 *     raised only up to the opt-in limit minus static shared memory (INVALID_VALUE);
 *     registers x threads (per warp, units of 256) <= 64K (LAUNCH_OUT_OF_RESOURCES);
 *     kernelParams: one non-NULL pointer per parameter of the image, each read for the
 *     parameter's size; extra: a buffer of the image's parameter size; not both (INVALID_VALUE);
 *   - behind a stream held by the blocking kernel at most FAKE_QUEUE_DEPTH operations queue;
 *     one more blocks the host until the stream drains (*assumed* depth: about a thousand);
 *   - cuMemcpyHtoD/DtoH are synchronous on the legacy stream, which waits for every blocking
 *     stream (a held one: until the blocking kernel gives up); cuMemHostAlloc takes PORTABLE,
 *     DEVICEMAP and WRITECOMBINED only, and only DEVICEMAP memory has a device pointer;
 *   - stream capture: a synchronising or allocating call while a stream captures fails with
 *     STREAM_CAPTURE_UNSUPPORTED and invalidates the capture (end capture then returns
 *     STREAM_CAPTURE_INVALIDATED);
 *   - events: elapsed time of an event never recorded -> INVALID_HANDLE, of one not yet
 *     completed -> NOT_READY.
 *
 * The virtual clock [ns]: every API call costs the host FAKE_CALL_NS; a kernel launch or
 * graph launch call FAKE_LAUNCH_HOST_NS more. On the stream, work starts when both the host
 * has submitted it and the work before it has ended: a kernel takes KBENCH_FAKE_CUDA_KERNEL_NS
 * (default 10000) + FAKE_EAGER_GPU_NS per eager launch, FAKE_GRAPH_NODE_NS per graph node; a
 * memset bytes/1000; the first launch of a graph not uploaded (cuGraphUpload) FAKE_UPLOAD_NS
 * more. Every GPU duration is multiplied by KBENCH_FAKE_CUDA_SLOWDOWN. An event is stamped
 * when the stream reaches it. A synchronising call moves the host clock to what it waits for.
 * The blocking kernel `kb_block_stream(volatile int *flag, int *timed_out, u64 timeout_ns)`
 * holds its stream until the host sets *flag (seen at the host's next API call) or
 * timeout_ns passes (then *timed_out = 1); work queued behind it then runs back to back.
 *
 * Environment:
 *   KBENCH_FAKE_CUDA_DRIVER    cuDriverGetVersion (default 13000; 12040 = an R550 driver)
 *   KBENCH_FAKE_CUDA_ARCH      compute capability x10 (default 90)
 *   KBENCH_FAKE_CUDA_NAME      device name (default "Fake GPU")
 *   KBENCH_FAKE_CUDA_SLOWDOWN  factor on every GPU duration (default 1)
 *   KBENCH_FAKE_CUDA_KERNEL_NS GPU time of one kernel (default 10000)
 *   KBENCH_FAKE_CUDA_FAULT     N: the N-th launch faults (CUDA_ERROR_ILLEGAL_ADDRESS at the
 *                              next synchronisation, sticky from then on); FAKE_CUDA_FAULT=1
 *                              is the older spelling of N = 1
 *   KBENCH_FAKE_CUDA_HOST_LAUNCH_US  each kernel or graph launch call also takes this many
 *                              microseconds of real time (a slow host launch path)
 *   KBENCH_FAKE_CUDA_FAIL      comma-separated driver function names (cuEventRecord, ...): while
 *                              set, each call of those returns CUDA_ERROR_UNKNOWN (not sticky)
 *
 * For tests, the double exports fake_cuda_host_ns(): its virtual host clock [ns]; and
 * fake_cuda_idle_ns(): how long no stream has had work [ns] (0 while busy), which the NVML
 * double reads to report an idle GPU. Retaining the primary context when nothing holds it
 * (the first retain, or one after every release) costs FAKE_CTX_CREATE_NS.
 */
#ifndef FAKE_CUDA_H
#define FAKE_CUDA_H

#define FAKE_CALL_NS 100.0
#define FAKE_LAUNCH_HOST_NS 4000.0
#define FAKE_EAGER_GPU_NS 1000.0
#define FAKE_GRAPH_NODE_NS 500.0
#define FAKE_UPLOAD_NS 50000.0
#define FAKE_BLOCK_ENTRY "kb_block_stream"
#define FAKE_CTX_CREATE_NS 1e8     /* creating the primary context (*assumed* ~100 ms, as cuInit + context take) */
#define FAKE_QUEUE_DEPTH 1024      /* launches a held stream queues before cuLaunchKernel blocks */

#endif
