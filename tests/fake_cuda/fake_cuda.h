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
 *     for another major arch or a newer minor than the device, or arch-specific (sm_90a,
 *     sm_100a, sm_120a) for any other compute capability than its own -> NO_BINARY_FOR_GPU; built by
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
 *     stream (a held one: until the blocking kernel gives up); an upload from pageable memory
 *     may still be in flight for a CU_STREAM_NON_BLOCKING stream (Driver API "API
 *     synchronization behavior"): a cuMemcpyPeerAsync on such a stream before any later
 *     legacy or blocking-stream operation moves nothing; cuMemHostAlloc takes PORTABLE,
 *     DEVICEMAP and WRITECOMBINED only, and only DEVICEMAP memory has a device pointer;
 *   - cuLaunchKernelEx: as cuLaunchKernel, and with CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION of
 *     more than one block (CUDA Programming Guide "Thread Block Clusters"; Driver API
 *     CUlaunchAttributeValue::clusterDim): no cluster dim 0 (INVALID_VALUE); and else
 *     CUDA_ERROR_INVALID_CLUSTER_SIZE ("cluster misconfiguration"; the code is *assumed* for
 *     each breach, no document names one per rule) for a device below compute capability 9.0,
 *     a grid not a multiple of the cluster in every dimension, more than 8 blocks (the
 *     portable size) or, with the function's NON_PORTABLE_CLUSTER_SIZE_ALLOWED, more than 16,
 *     more blocks than the device has SMs, and a block that does not fit on one SM (threads,
 *     64 K registers, shared memory per SM less 1 KB per block: no cluster can be resident).
 *     Any other launch attribute: NOT_SUPPORTED (not modelled);
 *   - cuGetProcAddress (cuda.h binds it to cuGetProcAddress_v2; Driver API "Driver Entry Point
 *     Access"): a cudaVersion above the driver's -> INVALID_VALUE; else CUDA_SUCCESS with *pfn
 *     NULL and symbolStatus SYMBOL_NOT_FOUND for an entry point this driver lacks (one newer
 *     than KBENCH_FAKE_CUDA_DRIVER, or listed in KBENCH_FAKE_CUDA_MISSING), VERSION_NOT_SUFFICIENT
 *     for a cudaVersion older than the one that introduced it; it knows cuTensorMapEncodeTiled
 *     (12.0) and cuLaunchKernelEx (11.8);
 *   - cuTensorMapEncodeTiled (fake_tmap.c, each rule with the sentence of its documentation):
 *     the tensorMap address 64-byte aligned; tensorDataType a CUtensorMapDataType; tensorRank
 *     1..5, >= 3 with interleave; globalAddress 16-byte aligned (32 with INTERLEAVE_32B);
 *     globalDim 1..2^32; globalStrides multiples of 16 (32 with INTERLEAVE_32B) below 2^40;
 *     boxDim 1..256 and, without interleave, boxDim[0] x element size a multiple of 16 bytes
 *     and at most the swizzle's span (32/64/128 B); INTERLEAVE_32B only with SWIZZLE_32B;
 *     elementStrides 1..8; the enums in range; NAN_REQUEST_ZERO_FMA only for float types: each
 *     breach INVALID_VALUE. A device below compute capability 9.0 -> NOT_SUPPORTED (*assumed*
 *     code: "only supported on devices of compute capability 9.0 or higher", no code named);
 *     the packed types (16U4/16U6) and the 128B_ATOM swizzles -> NOT_SUPPORTED (not modelled).
 *     The map it writes is fake_tmap below. A launch given a map (kernelParams[i] starting with
 *     FAKE_TMAP_MAGIC) runs and faults at the next synchronisation when the parameter is not
 *     the 128-byte map by value (an 8-byte pointer parameter: ILLEGAL_ADDRESS) or not 64-byte
 *     aligned where it lands in constant bank 0 (EIATTR_PARAM_CBANK's offset + its own, see
 *     fake_cubin.h; MISALIGNED_ADDRESS; both codes *assumed*: a map lives
 *     64-byte aligned, as the tensorMap rule and CUtensorMap's declared alignment say, and no
 *     document names the fault);
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
 *   KBENCH_FAKE_CUDA_SMS       multiprocessors (default 4)
 *   KBENCH_FAKE_CUDA_NAME      device name (default "Fake GPU")
 *   KBENCH_FAKE_CUDA_SLOWDOWN  factor on every GPU duration (default 1)
 *   KBENCH_FAKE_CUDA_KERNEL_NS GPU time of one kernel (default 10000)
 *   KBENCH_FAKE_CUDA_FAULT     N: the N-th launch faults (CUDA_ERROR_ILLEGAL_ADDRESS at the
 *                              next synchronisation, sticky from then on); FAKE_CUDA_FAULT=1
 *                              is the older spelling of N = 1
 *   KBENCH_FAKE_CUDA_HOST_LAUNCH_US  each kernel or graph launch call also takes this many
 *                              microseconds of real time (a slow host launch path)
 *   KBENCH_FAKE_CUDA_MISSING   comma-separated driver entry points cuGetProcAddress does not
 *                              find (a driver built without them)
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

#include <stdint.h>

#define FAKE_CALL_NS 100.0
#define FAKE_LAUNCH_HOST_NS 4000.0
#define FAKE_EAGER_GPU_NS 1000.0
#define FAKE_GRAPH_NODE_NS 500.0
#define FAKE_UPLOAD_NS 50000.0
#define FAKE_BLOCK_ENTRY "kb_block_stream"
#define FAKE_CTX_CREATE_NS 1e8     /* creating the primary context (*assumed* ~100 ms, as cuInit + context take) */
#define FAKE_QUEUE_DEPTH 1024      /* launches a held stream queues before cuLaunchKernel blocks */

/* The double's tensor map: what cuTensorMapEncodeTiled writes into the 128-byte CUtensorMap
 * (the rest zero), the arguments as given, so tests can read back what a caller passed. */
#define FAKE_TMAP_MAGIC 0x50414d544b414646ull   /* "FFAKTMAP" little-endian */
typedef struct {
    uint64_t magic;              /* FAKE_TMAP_MAGIC */
    uint64_t address;            /* globalAddress */
    uint64_t dim[5];             /* globalDim */
    uint64_t stride[4];          /* globalStrides [bytes] */
    uint16_t box[5];             /* boxDim */
    uint8_t estride[5];          /* elementStrides */
    uint8_t dtype, rank, interleave, swizzle, l2, oob;
} fake_tmap;

#endif
