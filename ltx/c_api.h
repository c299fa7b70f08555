/* The C API of ltx: the AllGather, Ulysses all-to-all, AllReduce and ReduceScatter runtime for
 * any language and build
 * system, in the style of nccl.h. Opaque handles, plain C types, CUDA streams and device
 * pointers; every call returns an ltx_code (0 = LTX_OK) and leaves a message that
 * ltx_last_error() reads on the same thread.
 *
 *   ltx_runtime_options options;
 *   ltx_runtime_options_init(&options);
 *   int devices[] = {0, 1};
 *   options.devices = devices;
 *   options.num_devices = 2;
 *   ltx_runtime* runtime;
 *   if (ltx_runtime_create(&options, &runtime) != LTX_OK) {
 *     fprintf(stderr, "%s\n", ltx_last_error());  // e.g. "FAILED_PRECONDITION: no CUDA GPU ..."
 *   }
 *   int64_t counts[] = {100, 80};
 *   ltx_allgather_shape shape = {LTX_BFLOAT16, 1, 4096, counts, 2};
 *   ltx_rank_buffers buffers[] = {{in0, out0, stream0}, {in1, out1, stream1}};
 *   ltx_op* op;
 *   ltx_all_gather(runtime, &shape, buffers, 2, NULL, &op);   // coordinated, any thread
 *   ltx_op_wait(op, 30000000);                                 // 30 s
 *   ltx_op_destroy(op);
 *   ltx_all_gather_rank(runtime, rank, &shape, &buffers[rank], NULL);  // per rank, capturable
 *   ltx_alltoall_shape a2a = {LTX_BFLOAT16, 1, 32, 128, counts, 2, LTX_ALLTOALL_SEQ_TO_HEADS};
 *   ltx_all_to_all(runtime, &a2a, buffers, 2, NULL, &op);    // then ltx_op_wait, as above
 *   ltx_runtime_destroy(runtime);
 *
 * The semantics (shapes, ordering, threads, CUDA graphs, errors, Reset) are those of
 * ltx::Runtime in ltx/runtime.h and the guides (ltx/docs/). No C++ exception crosses this API; null pointers
 * and values outside an enum give LTX_INVALID_ARGUMENT. Durations are int64_t microseconds. */
#ifndef LTX_C_API_H_
#define LTX_C_API_H_

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header: LTX_VERSION_CODE = major * 10000 + minor * 100 + patch. */
#define LTX_VERSION_MAJOR 0
#define LTX_VERSION_MINOR 10
#define LTX_VERSION_PATCH 0
#define LTX_VERSION_CODE (LTX_VERSION_MAJOR * 10000 + LTX_VERSION_MINOR * 100 + LTX_VERSION_PATCH)

/* Result of every call: the canonical codes of absl::StatusCode, with the same values. */
typedef enum ltx_code {
  LTX_OK = 0,
  LTX_CANCELLED = 1,
  LTX_UNKNOWN = 2,
  LTX_INVALID_ARGUMENT = 3,
  LTX_DEADLINE_EXCEEDED = 4,
  LTX_NOT_FOUND = 5,
  LTX_ALREADY_EXISTS = 6,
  LTX_PERMISSION_DENIED = 7,
  LTX_RESOURCE_EXHAUSTED = 8,
  LTX_FAILED_PRECONDITION = 9,
  LTX_ABORTED = 10,
  LTX_OUT_OF_RANGE = 11,
  LTX_UNIMPLEMENTED = 12,
  LTX_INTERNAL = 13,
  LTX_UNAVAILABLE = 14,
  LTX_DATA_LOSS = 15,
  LTX_UNAUTHENTICATED = 16
} ltx_code;

/* Element types; the values are those of ltx::DataType. */
typedef enum ltx_data_type {
  LTX_BFLOAT16 = 1,
  LTX_FLOAT16 = 2,
  LTX_FLOAT32 = 3,
  LTX_FLOAT8_E4M3 = 4,
  LTX_FLOAT8_E5M2 = 5,
  LTX_INT8 = 6,
  LTX_UINT8 = 7,
  LTX_INT16 = 8,
  LTX_UINT16 = 9,
  LTX_INT32 = 10,
  LTX_UINT32 = 11,
  LTX_INT64 = 12,
  LTX_UINT64 = 13,
  LTX_FLOAT64 = 14,
  LTX_BOOL = 15,
  LTX_COMPLEX64 = 16,
  LTX_COMPLEX128 = 17
} ltx_data_type;

/* How a call moves its data (ltx::Protocol). */
typedef enum ltx_protocol {
  LTX_PROTOCOL_AUTO = 0,
  LTX_PROTOCOL_DIRECT = 1,
  LTX_PROTOCOL_ONE_TRIP = 2,
  LTX_PROTOCOL_COPY_ENGINE = 3
} ltx_protocol;

/* How an AllGather's rows or an all-to-all's head vectors travel (ltx::WireFormat). Since 0.9. */
typedef enum ltx_wire_format {
  LTX_WIRE_NATIVE = 0,  /* The caller's bytes, byte-exact. */
  LTX_WIRE_FP8_E4M3 = 1 /* Per row: e4m3 codes and an fp32 scale; a rank's own rows exact. */
} ltx_wire_format;

/* How data moves between GPUs (ltx::Transport). */
typedef enum ltx_transport {
  LTX_TRANSPORT_AUTO = 0,
  LTX_TRANSPORT_PEER_STORES = 1,
  LTX_TRANSPORT_COPY_ENGINE = 2
} ltx_transport;

/* two_shot_min_bytes of ltx_runtime_options and ltx_call_options: never the two-shot AllReduce
 * (but in place); ltx::kNeverTwoShot. Since 0.7. */
#define LTX_NEVER_TWO_SHOT INT64_MAX

/* A Runtime (ltx::Runtime). Opaque. */
typedef struct ltx_runtime ltx_runtime;
/* The completion of one coordinated call (ltx::CollectiveHandle). Opaque. */
typedef struct ltx_op ltx_op;

/* Options of ltx_runtime_create (ltx::RuntimeOptions). Fill it with ltx_runtime_options_init,
 * then change fields. `struct_size` tells the library which fields the caller knows: fields
 * added by later versions go at the end, and a library reads only the bytes struct_size covers
 * (later fields keep their defaults). It must be the size of this struct in some version of this
 * header (sizeof, or where a field marked "Since" begins); any other is INVALID_ARGUMENT. */
typedef struct ltx_runtime_options {
  size_t struct_size;
  /* CUDA device ordinals in rank order, a GPU repeated for ranks that share it ({0, 0}: two
   * ranks on GPU 0); NULL with num_devices 0: every visible GPU. */
  const int* devices;
  int num_devices;
  /* How long a GPU waits for its peers at a barrier, > 0. */
  int64_t timeout_us;
  /* Most thread blocks per rank's kernel; 0: one per SM, fewer where ranks share a GPU
   * (ltx::RuntimeOptions::max_blocks). */
  int max_blocks;
  /* How long host threads poll before they sleep; 0 never polls. */
  int64_t worker_spin_us;
  /* One-trip limit in bytes per rank (0 to 512 KiB), or -1 to let the world size set it. */
  int64_t one_trip_max_bytes;
  /* Eager calls sending at least this many bytes to one rank take the copy engines (where no
   * GPU hosts two ranks); 0: never. */
  int64_t copy_engine_min_bytes;
  /* An ltx_transport. */
  int transport;
  /* Since 0.7. The AllReduce runs two-shot (a ReduceScatter, then an AllGather of the chunks:
   * each rank reads its count once instead of once per rank) when each rank's input holds at
   * least this many bytes, one-shot below; in place it always runs two-shot. Both give the same
   * bits. 0: two-shot for every non-empty AllReduce; LTX_NEVER_TWO_SHOT: never (but in place);
   * must be >= 0. 1 MiB by default. */
  int64_t two_shot_min_bytes;
} ltx_runtime_options;

/* Options of one call (ltx::CallOptions). Fill it with ltx_call_options_init. Versioned by
 * struct_size like ltx_runtime_options. */
typedef struct ltx_call_options {
  size_t struct_size;
  /* Overrides the Runtime's timeout for this call when > 0; 0 keeps the Runtime's. */
  int64_t timeout_us;
  /* Block count of this call (still capped by max_blocks); 0: automatic. */
  int blocks;
  /* An ltx_protocol. */
  int protocol;
  /* Since 0.3. The reset generation the call was issued for (ltx_runtime_generation, read when
   * the step began), or -1 (the default): whatever generation is current. A call for an earlier
   * generation gets LTX_ABORTED with nothing launched, and the Runtime stays usable. */
  int64_t generation;
  /* Since 0.7. Overrides the Runtime's two_shot_min_bytes for this call (an AllReduce; other
   * collectives ignore it): 0 forces the two-shot, LTX_NEVER_TWO_SHOT the one-shot (but in
   * place); -1 (the default) keeps the Runtime's. Every rank of a call passes the same value. */
  int64_t two_shot_min_bytes;
  /* Since 0.9. An ltx_wire_format for an AllGather or an all-to-all (ltx::AllGatherShape::wire,
   * ltx::AllToAllShape::wire; the same on every rank): LTX_WIRE_FP8_E4M3 moves bf16 and fp16
   * rows of at least 8 elements (an AllGather: one tensor, not in place) or head vectors of at
   * least 8 elements, at most 256 heads per rank's group (an all-to-all, any tensor count) as
   * e4m3 codes with a scale each, on the kernels only. The other collectives take
   * LTX_WIRE_NATIVE (the default) only: INVALID_ARGUMENT otherwise. */
  int wire;
} ltx_call_options;

/* The shape of one AllGather, the same on every rank: rank r's input is
 * [batch, token_counts[r], hidden], every output [batch, sum(token_counts), hidden], contiguous
 * elements of `dtype` (an ltx_data_type). `token_counts` has `num_ranks` entries (the world
 * size) and is read during the call only. */
typedef struct ltx_allgather_shape {
  int dtype;
  int64_t batch;
  int64_t hidden;
  const int64_t* token_counts;
  int num_ranks;
} ltx_allgather_shape;

/* Which way an all-to-all re-shards (ltx::AllToAllDirection). */
typedef enum ltx_alltoall_direction {
  LTX_ALLTOALL_SEQ_TO_HEADS = 0,
  LTX_ALLTOALL_HEADS_TO_SEQ = 1
} ltx_alltoall_direction;

/* The shape of one Ulysses all-to-all (ltx::AllToAllShape), the same on every rank. With P =
 * num_ranks ranks, S = sum(token_counts) and H_r = head_counts[r] (heads / P without
 * head_counts): sequence -> heads takes rank r's input [batch, token_counts[r], heads, head_dim]
 * to every rank r's output [batch, S, H_r, head_dim] (heads [H_0 + ... + H_{r-1}, + H_r) of the
 * whole sequence); heads -> sequence is the exact inverse. Contiguous elements of `dtype` (an
 * ltx_data_type); `direction` an ltx_alltoall_direction. `token_counts` has `num_ranks`
 * entries; `head_counts` is NULL (the even split: heads divisible by P) or has `num_ranks`
 * entries, each >= 0, summing to heads. Both are read during the call only.
 *
 * This struct has no struct_size: a program built against a header before 0.4 (which had no
 * head_counts) must be rebuilt against this one. Zero-initialise it (`= {...}` with fewer
 * fields, or memset) so that head_counts is NULL where no split is wanted. */
typedef struct ltx_alltoall_shape {
  int dtype;
  int64_t batch;
  int64_t heads;
  int64_t head_dim;
  const int64_t* token_counts;
  int num_ranks;
  int direction;
  /* Since 0.4. Heads per rank on the heads-sharded side, or NULL for the even split. */
  const int64_t* head_counts;
} ltx_alltoall_shape;

/* How the AllReduce and the ReduceScatter combine the ranks' elements (ltx::Reduction). Since
 * 0.6. */
typedef enum ltx_reduction {
  LTX_REDUCE_SUM = 1,
  LTX_REDUCE_MAX = 2,
  LTX_REDUCE_MIN = 3
} ltx_reduction;

/* The shape of one AllReduce (ltx::AllReduceShape), the same on every rank: every rank's input
 * and output are `count` contiguous elements of `dtype` (LTX_BFLOAT16, LTX_FLOAT16 or
 * LTX_FLOAT32, aligned to the element size); every output becomes the element-wise `reduction`
 * (an ltx_reduction) of every rank's input, bitwise the same on every rank. Since 0.6. */
typedef struct ltx_allreduce_shape {
  int dtype;
  int64_t count;
  int reduction;
} ltx_allreduce_shape;

/* The shape of one ReduceScatter (ltx::ReduceScatterShape), the AllGather's reversed: every
 * rank's input is [batch, sum(token_counts), hidden], rank r's output [batch, token_counts[r],
 * hidden], the `reduction` over every rank of its rows. `token_counts` has `num_ranks` entries
 * and is read during the call only. Since 0.6. */
typedef struct ltx_reduce_scatter_shape {
  int dtype;
  int64_t batch;
  int64_t hidden;
  const int64_t* token_counts;
  int num_ranks;
  int reduction;
} ltx_reduce_scatter_shape;

/* One rank's buffers (device memory of the rank's GPU) and stream. `input` may be NULL when the
 * rank sends nothing, `output` when the output is empty. */
typedef struct ltx_rank_buffers {
  const void* input;
  void* output;
  cudaStream_t stream;
} ltx_rank_buffers;

/* Most tensors of one shape that one AllGather or all-to-all moves (ltx::kMaxTensors). Since
 * 0.7. */
#define LTX_MAX_TENSORS 4

/* One rank's buffers of a call of several tensors (ltx_all_gather_tensors,
 * ltx_all_to_all_tensors): tensor j reads inputs[j] and writes outputs[j], each under the rules
 * of ltx_rank_buffers; entries from the call's num_tensors on are not read. One stream for all.
 * Since 0.7; a new struct, so that ltx_rank_buffers and the calls that take it stay as they
 * were. */
typedef struct ltx_tensor_buffers {
  const void* inputs[LTX_MAX_TENSORS];
  void* outputs[LTX_MAX_TENSORS];
  cudaStream_t stream;
} ltx_tensor_buffers;

/* The shape of one AllReduce with the fused residual-add + RMSNorm epilogue
 * (ltx::AllReduceRmsNormShape), the same on every rank: `rows` rows of `hidden` elements of
 * `dtype` (LTX_BFLOAT16, LTX_FLOAT16 or LTX_FLOAT32) summed over the ranks, then per row
 * residual_out = sum + residual and output = residual_out / sqrt(mean(residual_out^2) + eps) *
 * weight, bitwise the same on every rank. Since 0.8. */
typedef struct ltx_allreduce_rmsnorm_shape {
  int dtype;
  int64_t rows;
  int64_t hidden;
  float eps;
} ltx_allreduce_rmsnorm_shape;

/* One rank's buffers of the epilogue (ltx::RmsNormBuffers), device memory of the rank's GPU
 * aligned to the element size: `input` (which the peers read), `residual` and the outputs
 * (rows x hidden each), `weight` (hidden); `residual_out` may be `residual` (in place), no
 * other buffer may overlap an output. Since 0.8. */
typedef struct ltx_rmsnorm_buffers {
  const void* input;
  void* output;
  const void* residual;
  void* residual_out;
  const void* weight;
  cudaStream_t stream;
} ltx_rmsnorm_buffers;

/* LTX_VERSION_CODE of the library in use (which may differ from the header's). Never fails;
 * does not change the last error. Thread-safe. */
int ltx_version(void);

/* The name of a code ("OK", "INVALID_ARGUMENT", ...), or "UNKNOWN_CODE" for another value. The
 * string is static. Does not change the last error. Thread-safe. */
const char* ltx_code_string(int code);

/* The message of the last call made on this thread that returned a code: "" after LTX_OK, else
 * "<CODE>: <what happened>", e.g. "INVALID_ARGUMENT: token_counts has 3 entries for 2 ranks".
 * Valid until the next ltx call on this thread. Thread-safe (one message per thread). */
const char* ltx_last_error(void);

/* Fills the first `size` bytes of `options` with the defaults of ltx::RuntimeOptions and sets
 * struct_size = size. `size` is sizeof(ltx_runtime_options) as the caller was compiled, which
 * the ltx_runtime_options_init macro passes: a program built against an older header gets its
 * own version's struct and not a byte past it. Errors: INVALID_ARGUMENT for NULL, or a size that
 * is no version's (a program built against a newer header than this library's). Thread-safe.
 * Since 0.10. */
int ltx_runtime_options_init_sized(ltx_runtime_options* options, size_t size);

/* Fills `call` as ltx_runtime_options_init_sized fills options, for ltx::CallOptions. Since
 * 0.10. */
int ltx_call_options_init_sized(ltx_call_options* call, size_t size);

/* The initialisers: ltx_runtime_options_init(&options) and ltx_call_options_init(&call). Before
 * 0.10 they were functions that fill the whole struct of the library's version; programs built
 * against those headers still call them (rebuild such a program to pass its own size). */
int(ltx_runtime_options_init)(ltx_runtime_options* options);
int(ltx_call_options_init)(ltx_call_options* call);
#define ltx_runtime_options_init(options) \
  ltx_runtime_options_init_sized((options), sizeof(*(options)))
#define ltx_call_options_init(call) ltx_call_options_init_sized((call), sizeof(*(call)))

/* Creates a Runtime over the devices of `options` (ltx::Runtime::Create) and stores it in
 * *runtime (NULL on error). Errors: INVALID_ARGUMENT for NULL pointers, a struct_size that is
 * no version's (ltx_runtime_options_init sets this library's), or bad options (an unknown
 * device, a non-positive timeout, ...; more than 8 ranks and negative ordinals even where no
 * GPU is visible); FAILED_PRECONDITION when no GPU is visible, or when peer stores are asked for and a pair
 * of GPUs lacks peer access; others as CUDA reports them. Thread-safe. */
int ltx_runtime_create(const ltx_runtime_options* options, ltx_runtime** runtime);

/* Destroys a Runtime: waits (bounded) for its kernels, stops its threads, frees its memory,
 * also after errors; it never waits for other work on the GPUs (ltx::Runtime::~Runtime). Every
 * ltx_op of it must be destroyed first, and graph replays of its calls must have finished.
 * Errors: INVALID_ARGUMENT for NULL. Must not run concurrently with other calls on the
 * Runtime. */
int ltx_runtime_destroy(ltx_runtime* runtime);

/* Stores the number of ranks in *world_size. Errors: INVALID_ARGUMENT for NULL. Thread-safe. */
int ltx_runtime_world_size(const ltx_runtime* runtime, int* world_size);

/* Stores the CUDA device ordinal of rank `rank` in *device. Errors: INVALID_ARGUMENT for NULL
 * or a rank outside [0, world size). Thread-safe. */
int ltx_runtime_device(const ltx_runtime* runtime, int rank, int* device);

/* Stores the transport in use (LTX_TRANSPORT_PEER_STORES or LTX_TRANSPORT_COPY_ENGINE) in
 * *transport. Errors: INVALID_ARGUMENT for NULL. Thread-safe. */
int ltx_runtime_transport(const ltx_runtime* runtime, int* transport);

/* Stores the reset generation (ltx::Runtime::generation: how many resets have succeeded since
 * creation) in *generation. Errors: INVALID_ARGUMENT for NULL. Thread-safe. Since 0.3. */
int ltx_runtime_generation(const ltx_runtime* runtime, uint64_t* generation);

/* Coordinated call (ltx::Runtime::AllGather): `buffers` has `num_buffers` entries, one per rank;
 * returns once every rank's part is enqueued on its stream and stores the op in *op (NULL on
 * error), to wait on with ltx_op_wait and free with ltx_op_destroy. `call` may be NULL (defaults).
 * Errors: INVALID_ARGUMENT (nothing enqueued, also for a call->generation below -1 or above the
 * current one, a call->two_shot_min_bytes below -1 or a negative call->blocks), UNIMPLEMENTED
 * for what no rank can run, e.g. LTX_PROTOCOL_COPY_ENGINE where ranks share a GPU beyond its
 * hardware queues (nothing enqueued; a coordinated call leaves the Runtime usable), ABORTED for
 * a call->generation older than the current one (nothing enqueued), FAILED_PRECONDITION after
 * an earlier error, or a device error not yet reported.
 * Thread-safety: as ltx::Runtime::AllGather. */
int ltx_all_gather(ltx_runtime* runtime, const ltx_allgather_shape* shape,
                   const ltx_rank_buffers* buffers, int num_buffers, const ltx_call_options* call,
                   ltx_op** op);

/* Waits up to `timeout_us` until the op has finished on every GPU (ltx::CollectiveHandle::Wait).
 * Errors: the device's error; DEADLINE_EXCEEDED naming the ranks still running (the op may
 * still finish: wait again); INVALID_ARGUMENT for NULL. Not thread-safe on one op. */
int ltx_op_wait(ltx_op* op, int64_t timeout_us);

/* Frees an op without waiting (its GPU work goes on; the Runtime still tracks it). Errors:
 * INVALID_ARGUMENT for NULL. Not thread-safe on one op (no other call on it may run or follow). */
int ltx_op_destroy(ltx_op* op);

/* Per-rank call (ltx::Runtime::AllGatherRank): enqueues rank `rank`'s part on buffers->stream
 * from the calling thread, with no host synchronisation, so it can be captured into a CUDA
 * graph. `call` may be NULL (defaults). Errors: as ltx_all_gather, plus INVALID_ARGUMENT for a
 * rank outside [0, world size). Any other INVALID_ARGUMENT (the C layer's too: NULL pointers,
 * struct sizes, enum values) stops the Runtime until ltx_runtime_reset, and so does
 * UNIMPLEMENTED (a rank cannot know that its peers refused alike); ABORTED (a call of an older
 * reset generation, whichever layer refuses its arguments) and an out-of-range rank leave it
 * usable.
 * Thread-safe across ranks. */
int ltx_all_gather_rank(ltx_runtime* runtime, int rank, const ltx_allgather_shape* shape,
                        const ltx_rank_buffers* buffers, const ltx_call_options* call);

/* Coordinated all-to-all (ltx::Runtime::AllToAll): as ltx_all_gather, with an all-to-all
 * shape. Errors: as ltx_all_gather, plus INVALID_ARGUMENT for a direction outside
 * ltx_alltoall_direction or for LTX_PROTOCOL_ONE_TRIP with a piece over 512 KiB.
 * LTX_PROTOCOL_COPY_ENGINE, and the copy-engine transport, run it on the copy engines, as
 * ltx_all_gather; LTX_PROTOCOL_AUTO takes them too for an eager call whose largest piece reaches
 * copy_engine_min_bytes (32 MiB by default) where no GPU hosts two ranks, and the kernels
 * otherwise.
 * Thread-safety: as ltx::Runtime::AllToAll. */
int ltx_all_to_all(ltx_runtime* runtime, const ltx_alltoall_shape* shape,
                   const ltx_rank_buffers* buffers, int num_buffers, const ltx_call_options* call,
                   ltx_op** op);

/* Per-rank all-to-all (ltx::Runtime::AllToAllRank): as ltx_all_gather_rank, with an
 * all-to-all shape; errors as ltx_all_to_all plus those of ltx_all_gather_rank. Thread-safe
 * across ranks. */
int ltx_all_to_all_rank(ltx_runtime* runtime, int rank, const ltx_alltoall_shape* shape,
                        const ltx_rank_buffers* buffers, const ltx_call_options* call);

/* Coordinated AllGather of `num_tensors` tensors of `shape` in one op (ltx::AllGatherShape::
 * tensors, e.g. Q, K and V): as ltx_all_gather, with `buffers` holding every rank's
 * ltx_tensor_buffers. Errors: as ltx_all_gather, plus INVALID_ARGUMENT for num_tensors outside
 * [1, LTX_MAX_TENSORS], and UNIMPLEMENTED for several tensors on LTX_PROTOCOL_ONE_TRIP,
 * LTX_PROTOCOL_COPY_ENGINE or the copy-engine transport (the direct kernel carries them).
 * Thread-safety: as ltx::Runtime::AllGather. Since 0.7. */
int ltx_all_gather_tensors(ltx_runtime* runtime, const ltx_allgather_shape* shape,
                           int num_tensors, const ltx_tensor_buffers* buffers, int num_buffers,
                           const ltx_call_options* call, ltx_op** op);

/* Per-rank AllGather of `num_tensors` tensors: as ltx_all_gather_rank, with rank `rank`'s
 * ltx_tensor_buffers; errors as ltx_all_gather_tensors plus those of ltx_all_gather_rank. Every
 * rank passes the same num_tensors. Thread-safe across ranks. Since 0.7. */
int ltx_all_gather_tensors_rank(ltx_runtime* runtime, int rank, const ltx_allgather_shape* shape,
                                int num_tensors, const ltx_tensor_buffers* buffers,
                                const ltx_call_options* call);

/* Coordinated all-to-all of `num_tensors` tensors of `shape` in one op (ltx::AllToAllShape::
 * tensors): as ltx_all_to_all, with every rank's ltx_tensor_buffers. Errors: as ltx_all_to_all,
 * plus INVALID_ARGUMENT for num_tensors outside [1, LTX_MAX_TENSORS], and UNIMPLEMENTED for
 * several tensors on LTX_PROTOCOL_ONE_TRIP, LTX_PROTOCOL_COPY_ENGINE or the copy-engine
 * transport. Thread-safety: as ltx::Runtime::AllToAll. Since 0.7. */
int ltx_all_to_all_tensors(ltx_runtime* runtime, const ltx_alltoall_shape* shape,
                           int num_tensors, const ltx_tensor_buffers* buffers, int num_buffers,
                           const ltx_call_options* call, ltx_op** op);

/* Per-rank all-to-all of `num_tensors` tensors: as ltx_all_to_all_rank, with rank `rank`'s
 * ltx_tensor_buffers; errors as ltx_all_to_all_tensors plus those of ltx_all_gather_rank. Every
 * rank passes the same num_tensors. Thread-safe across ranks. Since 0.7. */
int ltx_all_to_all_tensors_rank(ltx_runtime* runtime, int rank, const ltx_alltoall_shape* shape,
                                int num_tensors, const ltx_tensor_buffers* buffers,
                                const ltx_call_options* call);

/* Coordinated AllReduce (ltx::Runtime::AllReduce): as ltx_all_gather, with an AllReduce
 * shape; in place where every rank's input is its output. Errors: as ltx_all_gather, plus
 * INVALID_ARGUMENT for a dtype other than LTX_BFLOAT16, LTX_FLOAT16 and LTX_FLOAT32, a
 * reduction outside ltx_reduction, buffers not aligned to the element size, managed memory as
 * input, or LTX_PROTOCOL_ONE_TRIP or LTX_PROTOCOL_COPY_ENGINE; UNIMPLEMENTED on the copy-engine
 * transport. Thread-safety: as ltx::Runtime::AllReduce. Since 0.6. */
int ltx_all_reduce(ltx_runtime* runtime, const ltx_allreduce_shape* shape,
                   const ltx_rank_buffers* buffers, int num_buffers, const ltx_call_options* call,
                   ltx_op** op);

/* Per-rank AllReduce (ltx::Runtime::AllReduceRank): as ltx_all_gather_rank, with an AllReduce
 * shape; errors as ltx_all_reduce plus those of ltx_all_gather_rank. Thread-safe across ranks.
 * Since 0.6. */
int ltx_all_reduce_rank(ltx_runtime* runtime, int rank, const ltx_allreduce_shape* shape,
                        const ltx_rank_buffers* buffers, const ltx_call_options* call);

/* Coordinated ReduceScatter (ltx::Runtime::ReduceScatter): as ltx_all_reduce, with a
 * ReduceScatter shape and no in-place form (an input that overlaps the output is
 * INVALID_ARGUMENT). Thread-safety: as ltx::Runtime::ReduceScatter. Since 0.6. */
int ltx_reduce_scatter(ltx_runtime* runtime, const ltx_reduce_scatter_shape* shape,
                       const ltx_rank_buffers* buffers, int num_buffers,
                       const ltx_call_options* call, ltx_op** op);

/* Per-rank ReduceScatter (ltx::Runtime::ReduceScatterRank): as ltx_all_reduce_rank, with a
 * ReduceScatter shape. Thread-safe across ranks. Since 0.6. */
int ltx_reduce_scatter_rank(ltx_runtime* runtime, int rank, const ltx_reduce_scatter_shape* shape,
                            const ltx_rank_buffers* buffers, const ltx_call_options* call);

/* Coordinated AllReduce with the fused RMSNorm epilogue (ltx::Runtime::AllReduceRmsNorm): as
 * ltx_all_reduce, with one ltx_rmsnorm_buffers per rank. Errors: as ltx_all_reduce, plus
 * INVALID_ARGUMENT for rows < 0, hidden outside 1..2^24, eps not positive and finite, an input
 * in place in its output, a null or misaligned weight where there are rows, or a weight that
 * overlaps an output. Thread-safety: as ltx::Runtime::AllReduceRmsNorm. Since 0.8. */
int ltx_all_reduce_rmsnorm(ltx_runtime* runtime, const ltx_allreduce_rmsnorm_shape* shape,
                           const ltx_rmsnorm_buffers* buffers, int num_buffers,
                           const ltx_call_options* call, ltx_op** op);

/* Per-rank AllReduce with the fused RMSNorm epilogue (ltx::Runtime::AllReduceRmsNormRank): as
 * ltx_all_reduce_rank; errors as ltx_all_reduce_rmsnorm plus those of ltx_all_gather_rank.
 * Thread-safe across ranks. Since 0.8. */
int ltx_all_reduce_rmsnorm_rank(ltx_runtime* runtime, int rank,
                                const ltx_allreduce_rmsnorm_shape* shape,
                                const ltx_rmsnorm_buffers* buffers, const ltx_call_options* call);

/* Waits up to `timeout_us` until every rank's last op made through the Runtime has finished
 * (ltx::Runtime::Synchronize). Errors: the first device error (the Runtime then stopped);
 * DEADLINE_EXCEEDED naming the ranks still running (they may still finish: wait again);
 * INVALID_ARGUMENT for NULL. Must not run concurrently with calls. */
int ltx_runtime_synchronize(ltx_runtime* runtime, int64_t timeout_us);

/* The sticky error state (ltx::Runtime::status): LTX_OK, or the error that stopped the Runtime;
 * INVALID_ARGUMENT for NULL. Thread-safe. */
int ltx_runtime_status(ltx_runtime* runtime);

/* Stops the Runtime with the error `code` (LTX_CANCELLED .. LTX_UNAUTHENTICATED) and `message`
 * (ltx::Runtime::Stop), as a per-rank call that the Runtime refuses does: ltx_runtime_status then
 * returns that error, calls fail with LTX_FAILED_PRECONDITION naming it until ltx_runtime_reset,
 * and every wait on the GPUs of an op in flight ends at once. For a binding that refuses a rank's
 * per-rank call before it reaches the library, or a server that gives up a step. Where the
 * Runtime had stopped already, its first error stays the one reported. Returns LTX_OK;
 * INVALID_ARGUMENT for a NULL runtime or message or a code outside that range. Thread-safe.
 * Since 0.10. */
int ltx_runtime_stop(ltx_runtime* runtime, int code, const char* message);

/* Makes the Runtime usable after an error (ltx::Runtime::Reset), waiting up to `timeout_us`
 * for its kernels. Errors: DEADLINE_EXCEEDED when they are still running (the Runtime stays in
 * error: reset again later); INVALID_ARGUMENT for NULL. Must not run concurrently with calls. */
int ltx_runtime_reset(ltx_runtime* runtime, int64_t timeout_us);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LTX_C_API_H_ */
