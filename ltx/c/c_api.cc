// The C API of ltx (ltx/c_api.h) over ltx::Runtime: converts the C structs to the C++ types,
// turns every absl::Status into its code plus a thread-local message, and keeps C++ exceptions
// from crossing into C.
#include "ltx/c_api.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "absl/types/span.h"
#include "ltx/allreduce_shape.h"
#include "ltx/alltoall_shape.h"
#include "ltx/collectives/allgather_layout.h"
#include "ltx/data_type.h"
#include "ltx/rank_buffers.h"
#include "ltx/reduce_scatter_shape.h"
#include "ltx/reduction.h"
#include "ltx/runtime.h"
#include "ltx/runtime/resolved_call.h"
#include "ltx/runtime_options.h"
#include "ltx/status_macros.h"

struct ltx_runtime {
  std::unique_ptr<ltx::Runtime> runtime;
};

struct ltx_op {
  ltx::CollectiveHandle handle;
};

namespace {

static_assert(LTX_OK == static_cast<int>(absl::StatusCode::kOk), "code values");
static_assert(LTX_INVALID_ARGUMENT == static_cast<int>(absl::StatusCode::kInvalidArgument),
              "code values");
static_assert(LTX_DEADLINE_EXCEEDED == static_cast<int>(absl::StatusCode::kDeadlineExceeded),
              "code values");
static_assert(LTX_FAILED_PRECONDITION == static_cast<int>(absl::StatusCode::kFailedPrecondition),
              "code values");
static_assert(LTX_UNIMPLEMENTED == static_cast<int>(absl::StatusCode::kUnimplemented),
              "code values");
static_assert(LTX_UNAUTHENTICATED == static_cast<int>(absl::StatusCode::kUnauthenticated),
              "code values");
static_assert(LTX_BFLOAT16 == static_cast<int>(ltx::DataType::kBFloat16), "dtype values");
static_assert(LTX_FLOAT16 == static_cast<int>(ltx::DataType::kFloat16), "dtype values");
static_assert(LTX_FLOAT32 == static_cast<int>(ltx::DataType::kFloat32), "dtype values");
static_assert(LTX_FLOAT8_E4M3 == static_cast<int>(ltx::DataType::kFloat8E4M3), "dtype values");
static_assert(LTX_FLOAT8_E5M2 == static_cast<int>(ltx::DataType::kFloat8E5M2), "dtype values");
static_assert(LTX_INT8 == static_cast<int>(ltx::DataType::kInt8), "dtype values");
static_assert(LTX_UINT8 == static_cast<int>(ltx::DataType::kUint8), "dtype values");
static_assert(LTX_INT16 == static_cast<int>(ltx::DataType::kInt16), "dtype values");
static_assert(LTX_UINT16 == static_cast<int>(ltx::DataType::kUint16), "dtype values");
static_assert(LTX_INT32 == static_cast<int>(ltx::DataType::kInt32), "dtype values");
static_assert(LTX_UINT32 == static_cast<int>(ltx::DataType::kUint32), "dtype values");
static_assert(LTX_INT64 == static_cast<int>(ltx::DataType::kInt64), "dtype values");
static_assert(LTX_UINT64 == static_cast<int>(ltx::DataType::kUint64), "dtype values");
static_assert(LTX_FLOAT64 == static_cast<int>(ltx::DataType::kFloat64), "dtype values");
static_assert(LTX_BOOL == static_cast<int>(ltx::DataType::kBool), "dtype values");
static_assert(LTX_COMPLEX64 == static_cast<int>(ltx::DataType::kComplex64), "dtype values");
static_assert(LTX_COMPLEX128 == static_cast<int>(ltx::DataType::kComplex128), "dtype values");
static_assert(LTX_REDUCE_SUM == static_cast<int>(ltx::Reduction::kSum) &&
                  LTX_REDUCE_MAX == static_cast<int>(ltx::Reduction::kMax) &&
                  LTX_REDUCE_MIN == static_cast<int>(ltx::Reduction::kMin),
              "reduction values");

// Names of the codes, indexed by value (absl::StatusCodeToString spells them alike).
constexpr const char* kCodeNames[] = {
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
};
static_assert(sizeof(kCodeNames) / sizeof(kCodeNames[0]) == LTX_UNAUTHENTICATED + 1,
              "one name per code");

// The C enums, in value order, as the C++ ones.
constexpr ltx::Protocol kProtocols[] = {ltx::Protocol::kAuto, ltx::Protocol::kDirect,
                                        ltx::Protocol::kOneTrip, ltx::Protocol::kCopyEngine};
constexpr ltx::Transport kTransports[] = {ltx::Transport::kAuto, ltx::Transport::kPeerStores,
                                          ltx::Transport::kCopyEngine};
static_assert(kProtocols[LTX_PROTOCOL_COPY_ENGINE] == ltx::Protocol::kCopyEngine, "enum order");
constexpr ltx::AllToAllDirection kDirections[] = {ltx::AllToAllDirection::kSeqToHeads,
                                                  ltx::AllToAllDirection::kHeadsToSeq};
static_assert(kDirections[LTX_ALLTOALL_HEADS_TO_SEQ] == ltx::AllToAllDirection::kHeadsToSeq,
              "enum order");
static_assert(kTransports[LTX_TRANSPORT_COPY_ENGINE] == ltx::Transport::kCopyEngine, "enum order");
static_assert(LTX_NEVER_TWO_SHOT == ltx::kNeverTwoShot, "two-shot sentinel");

// This thread's message of its last call ("" after OK), and a fixed message that stands for
// it where recording it would need memory there is none of (nullptr otherwise).
std::string& LastError() {
  thread_local std::string message;
  return message;
}
const char*& FixedLastError() {
  thread_local const char* message = nullptr;
  return message;
}

// Records `status` as this thread's last error and returns its code. Never throws: without the
// memory for the message, the message is a fixed one.
int Finish(const absl::Status& status) noexcept {
  try {
    LastError() = status.ok() ? std::string() : status.ToString();
    FixedLastError() = nullptr;
  } catch (...) {
    FixedLastError() = "RESOURCE_EXHAUSTED: out of host memory for the error message";
  }
  return static_cast<int>(status.code());
}

// Runs `body` (returning absl::Status) and finishes with its status; a C++ exception becomes
// RESOURCE_EXHAUSTED (out of memory) or INTERNAL instead of crossing into C.
template <typename Body>
int Guarded(Body&& body) noexcept {
  try {
    return Finish(body());
  } catch (const std::bad_alloc&) {
    FixedLastError() = "RESOURCE_EXHAUSTED: out of host memory";
    return LTX_RESOURCE_EXHAUSTED;
  } catch (...) {
    FixedLastError() = "INTERNAL: unexpected C++ exception";
    return LTX_INTERNAL;
  }
}

// InvalidArgument naming `name` when `pointer` is NULL.
absl::Status CheckNotNull(const void* pointer, absl::string_view name) {
  if (pointer == nullptr) return absl::InvalidArgumentError(absl::StrFormat("%s is NULL", name));
  return absl::OkStatus();
}

// Checks `count` entries at `array`: count >= 0, and a non-null array when count > 0.
absl::Status CheckArray(const void* array, int count, absl::string_view name) {
  if (count < 0) {
    return absl::InvalidArgumentError(absl::StrFormat("%s has %d entries", name, count));
  }
  if (count > 0) return CheckNotNull(array, name);
  return absl::OkStatus();
}

// Maps an int of a C enum to element `value` of `table`, or InvalidArgument naming `name`.
template <typename T, size_t N>
absl::StatusOr<T> FromCEnum(int value, const T (&table)[N], absl::string_view name) {
  if (value < 0 || static_cast<size_t>(value) >= N) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s = %d is outside [0, %d)", name, value, static_cast<int>(N)));
  }
  return table[value];
}

// The value of the C enum whose `table` entry is `value`.
template <typename T, size_t N>
int ToCEnum(T value, const T (&table)[N]) {
  int index = 0;
  while (static_cast<size_t>(index) + 1 < N && table[index] != value) ++index;
  return index;
}

// The struct_size of each version of a versioned struct, oldest first: where each field marked
// "Since" in ltx/c_api.h begins (the size of the struct before it), then the whole struct.
constexpr size_t kRuntimeOptionsSizes[] = {
    offsetof(ltx_runtime_options, two_shot_min_bytes),  // Before 0.7.
    sizeof(ltx_runtime_options)};
constexpr size_t kCallOptionsSizes[] = {
    offsetof(ltx_call_options, generation),          // Before 0.3.
    offsetof(ltx_call_options, two_shot_min_bytes),  // 0.3 to 0.6.
    offsetof(ltx_call_options, wire),                // 0.7 and 0.8.
    sizeof(ltx_call_options)};

// The defaults of each versioned struct, whole, with struct_size = sizeof.
void FillRuntimeOptionsDefaults(ltx_runtime_options* options) {
  const ltx::RuntimeOptions defaults;
  *options = ltx_runtime_options{};
  options->struct_size = sizeof(*options);
  options->timeout_us = absl::ToInt64Microseconds(defaults.timeout);
  options->max_blocks = defaults.max_blocks;
  options->worker_spin_us = absl::ToInt64Microseconds(defaults.worker_spin);
  options->one_trip_max_bytes = defaults.one_trip_max_bytes;
  options->copy_engine_min_bytes = defaults.copy_engine_min_bytes;
  options->transport = ToCEnum(defaults.transport, kTransports);
  options->two_shot_min_bytes = defaults.two_shot_min_bytes;
}

void FillCallOptionsDefaults(ltx_call_options* call) {
  const ltx::CallOptions defaults;
  *call = ltx_call_options{};
  call->struct_size = sizeof(*call);
  call->blocks = defaults.blocks;
  call->protocol = ToCEnum(defaults.protocol, kProtocols);
  call->generation = -1;
  call->two_shot_min_bytes = -1;
}

// Fills the first `size` bytes of `out` (a caller's struct of some version) with the defaults
// of `fill` and sets its struct_size to `size`. InvalidArgument for NULL, or a size that is none
// of `sizes`.
template <typename T, size_t kVersions>
absl::Status InitVersioned(T* out, size_t size, void (*fill)(T*),
                           const size_t (&sizes)[kVersions], absl::string_view name) {
  if (out == nullptr) return absl::InvalidArgumentError(absl::StrFormat("%s is NULL", name));
  if (std::find(std::begin(sizes), std::end(sizes), size) == std::end(sizes)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: a struct of %d bytes, but this library (version %d) knows the sizes %s (a program "
        "built against a newer header needs a newer library)",
        name, size, LTX_VERSION_CODE, absl::StrJoin(sizes, ", ")));
  }
  T defaults;
  fill(&defaults);
  defaults.struct_size = size;
  std::memcpy(out, &defaults, size);
  return absl::OkStatus();
}

// Copies a versioned struct: `fill`'s defaults, then the first struct_size bytes of `in`.
// InvalidArgument for NULL, or a struct_size that is none of `sizes` (the struct of some version
// of ltx/c_api.h: one that ends inside a field, or a caller built against a newer header).
template <typename T, size_t kVersions>
absl::StatusOr<T> ReadVersioned(const T* in, void (*fill)(T*), const size_t (&sizes)[kVersions],
                                absl::string_view name) {
  if (in == nullptr) return absl::InvalidArgumentError(absl::StrFormat("%s is NULL", name));
  if (std::find(std::begin(sizes), std::end(sizes), in->struct_size) == std::end(sizes)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s->struct_size = %d, but this library (version %d) takes the size of one of its "
        "versions (%s bytes); initialise it with %s_init",
        name, in->struct_size, LTX_VERSION_CODE, absl::StrJoin(sizes, ", "), name));
  }
  T out;
  fill(&out);
  std::memcpy(&out, in, in->struct_size);
  out.struct_size = sizeof(T);
  return out;
}

// The RuntimeOptions of `in`; InvalidArgument for NULL, a bad struct_size, devices or transport.
absl::StatusOr<ltx::RuntimeOptions> ToRuntimeOptions(const ltx_runtime_options* in) {
  absl::StatusOr<ltx_runtime_options> c =
      ReadVersioned(in, &FillRuntimeOptionsDefaults, kRuntimeOptionsSizes, "ltx_runtime_options");
  if (!c.ok()) return c.status();
  absl::Status devices = CheckArray(c->devices, c->num_devices, "options->devices");
  if (!devices.ok()) return devices;
  absl::StatusOr<ltx::Transport> transport =
      FromCEnum(c->transport, kTransports, "options->transport");
  if (!transport.ok()) return transport.status();
  ltx::RuntimeOptions options;
  options.devices.assign(c->devices, c->devices + c->num_devices);
  options.timeout = absl::Microseconds(c->timeout_us);
  options.max_blocks = c->max_blocks;
  options.worker_spin = absl::Microseconds(c->worker_spin_us);
  options.one_trip_max_bytes = c->one_trip_max_bytes;
  options.copy_engine_min_bytes = c->copy_engine_min_bytes;
  options.transport = *transport;
  options.two_shot_min_bytes = c->two_shot_min_bytes;  // Validated by the Runtime.
  return options;
}

// The CallOptions of `in`, or the defaults for NULL, with its wire format put into `shape`: an
// AllGather's or an all-to-all's (LTX_WIRE_NATIVE for NULL, or for a struct from before 0.9);
// the other collectives take LTX_WIRE_NATIVE only.
template <typename Shape>
absl::StatusOr<ltx::CallOptions> ToCallOptions(const ltx_call_options* in, Shape* shape) {
  ltx::CallOptions call;
  if (in == nullptr) return call;
  absl::StatusOr<ltx_call_options> c =
      ReadVersioned(in, &FillCallOptionsDefaults, kCallOptionsSizes, "ltx_call_options");
  if (!c.ok()) return c.status();
  if (c->timeout_us < 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("call->timeout_us = %d is negative", c->timeout_us));
  }
  if (c->blocks < 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("call->blocks = %d: pass a block count >= 0 (0: automatic)", c->blocks));
  }
  absl::StatusOr<ltx::Protocol> protocol = FromCEnum(c->protocol, kProtocols, "call->protocol");
  if (!protocol.ok()) return protocol.status();
  if (c->two_shot_min_bytes < -1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "call->two_shot_min_bytes = %d: pass a byte count >= 0, or -1 for the Runtime's",
        c->two_shot_min_bytes));
  }
  if (c->generation < -1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "call->generation = %d: pass a value of ltx_runtime_generation, or -1 for any",
        c->generation));
  }
  if (c->timeout_us > 0) call.timeout = absl::Microseconds(c->timeout_us);
  call.blocks = c->blocks;
  call.protocol = *protocol;
  if (c->generation >= 0) call.generation = static_cast<uint64_t>(c->generation);
  if (c->two_shot_min_bytes >= 0) call.two_shot_min_bytes = c->two_shot_min_bytes;
  if (c->wire != LTX_WIRE_NATIVE && c->wire != LTX_WIRE_FP8_E4M3) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "call->wire = %d: pass LTX_WIRE_NATIVE or LTX_WIRE_FP8_E4M3", c->wire));
  }
  const auto wire = static_cast<ltx::WireFormat>(c->wire);
  if constexpr (std::is_same_v<Shape, ltx::AllGatherShape> ||
                std::is_same_v<Shape, ltx::AllToAllShape>) {
    shape->wire = wire;
  } else if (wire != ltx::WireFormat::kNative) {
    return absl::InvalidArgumentError(
        "call->wire: only an AllGather or an all-to-all takes a wire format other than "
        "LTX_WIRE_NATIVE");
  }
  return call;
}

// The shape of `in`; its token counts point into the caller's array.
absl::StatusOr<ltx::AllGatherShape> ToShape(const ltx_allgather_shape* in) {
  absl::Status status = CheckNotNull(in, "shape");
  if (status.ok()) status = CheckArray(in->token_counts, in->num_ranks, "shape->token_counts");
  if (!status.ok()) return status;
  ltx::AllGatherShape shape;
  shape.dtype = static_cast<ltx::DataType>(in->dtype);  // Validated by the Runtime.
  shape.batch = in->batch;
  shape.hidden = in->hidden;
  shape.token_counts = absl::MakeConstSpan(in->token_counts, in->num_ranks);
  return shape;
}

// The all-to-all shape of `in`; its token and head counts point into the caller's arrays.
absl::StatusOr<ltx::AllToAllShape> ToShape(const ltx_alltoall_shape* in) {
  absl::Status status = CheckNotNull(in, "shape");
  if (status.ok()) status = CheckArray(in->token_counts, in->num_ranks, "shape->token_counts");
  if (!status.ok()) return status;
  absl::StatusOr<ltx::AllToAllDirection> direction =
      FromCEnum(in->direction, kDirections, "shape->direction");
  if (!direction.ok()) return direction.status();
  ltx::AllToAllShape shape;
  shape.dtype = static_cast<ltx::DataType>(in->dtype);  // Validated by the Runtime.
  shape.batch = in->batch;
  shape.heads = in->heads;
  shape.head_dim = in->head_dim;
  shape.token_counts = absl::MakeConstSpan(in->token_counts, in->num_ranks);
  shape.direction = *direction;
  if (in->head_counts != nullptr) {
    shape.head_counts = absl::MakeConstSpan(in->head_counts, in->num_ranks);
  }
  return shape;
}

// The AllReduce shape of `in` (its dtype and reduction validated by the Runtime).
absl::StatusOr<ltx::AllReduceShape> ToShape(const ltx_allreduce_shape* in) {
  LTX_RETURN_IF_ERROR(CheckNotNull(in, "shape"));
  ltx::AllReduceShape shape;
  shape.dtype = static_cast<ltx::DataType>(in->dtype);
  shape.count = in->count;
  shape.reduction = static_cast<ltx::Reduction>(in->reduction);
  return shape;
}

// The ReduceScatter shape of `in`; its token counts point into the caller's array.
absl::StatusOr<ltx::ReduceScatterShape> ToShape(const ltx_reduce_scatter_shape* in) {
  LTX_RETURN_IF_ERROR(CheckNotNull(in, "shape"));
  LTX_RETURN_IF_ERROR(CheckArray(in->token_counts, in->num_ranks, "shape->token_counts"));
  ltx::ReduceScatterShape shape;
  shape.dtype = static_cast<ltx::DataType>(in->dtype);  // Validated by the Runtime.
  shape.batch = in->batch;
  shape.hidden = in->hidden;
  shape.token_counts = absl::MakeConstSpan(in->token_counts, in->num_ranks);
  shape.reduction = static_cast<ltx::Reduction>(in->reduction);
  return shape;
}

// The epilogue's shape of `in` (validated by the Runtime).
absl::StatusOr<ltx::AllReduceRmsNormShape> ToShape(const ltx_allreduce_rmsnorm_shape* in) {
  LTX_RETURN_IF_ERROR(CheckNotNull(in, "shape"));
  ltx::AllReduceRmsNormShape shape;
  shape.dtype = static_cast<ltx::DataType>(in->dtype);
  shape.rows = in->rows;
  shape.hidden = in->hidden;
  shape.eps = in->eps;
  return shape;
}

// The coordinated and per-rank calls of each collective, chosen by the shape's type.
absl::StatusOr<ltx::CollectiveHandle> Launch(ltx::Runtime& runtime,
                                             const ltx::AllGatherShape& shape,
                                             absl::Span<const ltx::RankBuffers> buffers,
                                             const ltx::CallOptions& call) {
  return runtime.AllGather(shape, buffers, call);
}
absl::StatusOr<ltx::CollectiveHandle> Launch(ltx::Runtime& runtime,
                                             const ltx::AllToAllShape& shape,
                                             absl::Span<const ltx::RankBuffers> buffers,
                                             const ltx::CallOptions& call) {
  return runtime.AllToAll(shape, buffers, call);
}
absl::Status LaunchRank(ltx::Runtime& runtime, int rank, const ltx::AllGatherShape& shape,
                        const ltx::RankBuffers& buffers, const ltx::CallOptions& call) {
  return runtime.AllGatherRank(rank, shape, buffers, call);
}
absl::Status LaunchRank(ltx::Runtime& runtime, int rank, const ltx::AllToAllShape& shape,
                        const ltx::RankBuffers& buffers, const ltx::CallOptions& call) {
  return runtime.AllToAllRank(rank, shape, buffers, call);
}

absl::StatusOr<ltx::CollectiveHandle> Launch(ltx::Runtime& runtime,
                                             const ltx::AllReduceShape& shape,
                                             absl::Span<const ltx::RankBuffers> buffers,
                                             const ltx::CallOptions& call) {
  return runtime.AllReduce(shape, buffers, call);
}
absl::StatusOr<ltx::CollectiveHandle> Launch(ltx::Runtime& runtime,
                                             const ltx::ReduceScatterShape& shape,
                                             absl::Span<const ltx::RankBuffers> buffers,
                                             const ltx::CallOptions& call) {
  return runtime.ReduceScatter(shape, buffers, call);
}
absl::Status LaunchRank(ltx::Runtime& runtime, int rank, const ltx::AllReduceShape& shape,
                        const ltx::RankBuffers& buffers, const ltx::CallOptions& call) {
  return runtime.AllReduceRank(rank, shape, buffers, call);
}
absl::Status LaunchRank(ltx::Runtime& runtime, int rank, const ltx::ReduceScatterShape& shape,
                        const ltx::RankBuffers& buffers, const ltx::CallOptions& call) {
  return runtime.ReduceScatterRank(rank, shape, buffers, call);
}
absl::StatusOr<ltx::CollectiveHandle> Launch(ltx::Runtime& runtime,
                                             const ltx::AllReduceRmsNormShape& shape,
                                             absl::Span<const ltx::RmsNormBuffers> buffers,
                                             const ltx::CallOptions& call) {
  return runtime.AllReduceRmsNorm(shape, buffers, call);
}
absl::Status LaunchRank(ltx::Runtime& runtime, int rank, const ltx::AllReduceRmsNormShape& shape,
                        const ltx::RmsNormBuffers& buffers, const ltx::CallOptions& call) {
  return runtime.AllReduceRmsNormRank(rank, shape, buffers, call);
}

static_assert(LTX_MAX_TENSORS == ltx::kMaxTensors, "tensor limit");

// One rank's C buffers as C++ buffers: an ltx_rank_buffers holds the call's one tensor, an
// ltx_tensor_buffers its first `tensors` (1..kMaxTensors), an ltx_rmsnorm_buffers the
// epilogue's.
ltx::RankBuffers ToRankBuffers(const ltx_rank_buffers& in, int /*tensors: 1*/) {
  return ltx::RankBuffers{in.input, in.output, in.stream};
}
ltx::RankBuffers ToRankBuffers(const ltx_tensor_buffers& in, int tensors) {
  ltx::RankBuffers out{in.inputs[0], in.outputs[0], in.stream};
  for (int j = 1; j < tensors; ++j) {
    out.more_inputs[j - 1] = in.inputs[j];
    out.more_outputs[j - 1] = in.outputs[j];
  }
  return out;
}
ltx::RmsNormBuffers ToRankBuffers(const ltx_rmsnorm_buffers& in, int /*tensors: 1*/) {
  return ltx::RmsNormBuffers{in.input,        in.output, in.residual,
                             in.residual_out, in.weight, in.stream};
}

// InvalidArgument unless 1 <= tensors <= kMaxTensors.
absl::Status CheckTensors(int tensors) {
  if (tensors < 1 || tensors > ltx::kMaxTensors) {
    return absl::InvalidArgumentError(
        absl::StrFormat("num_tensors = %d is outside [1, %d]", tensors, ltx::kMaxTensors));
  }
  return absl::OkStatus();
}

// The C++ shape of `in` for a call of `tensors` tensors: the AllGather's and the all-to-all's
// shapes count them; the reductions' calls move one.
template <typename CShape>
auto ToShape(const CShape* in, int tensors) {
  auto shape = ToShape(in);
  using Shape = typename decltype(shape)::value_type;
  if constexpr (std::is_same_v<Shape, ltx::AllGatherShape> ||
                std::is_same_v<Shape, ltx::AllToAllShape>) {
    if (shape.ok()) shape->tensors = tensors;
  }
  return shape;
}

// Stores `value` in *out, or InvalidArgument naming `name` when `out` is NULL.
absl::Status Store(int value, int* out, absl::string_view name) {
  absl::Status status = CheckNotNull(out, name);
  if (status.ok()) *out = value;
  return status;
}

// InvalidArgument when `runtime` is NULL.
absl::Status CheckRuntime(const ltx_runtime* runtime) { return CheckNotNull(runtime, "runtime"); }

// The Runtimes that ltx_runtime_create made and ltx_runtime_destroy has not freed, so that a
// refusal can stop the Runtime that a pointer names without reading through one that names none.
absl::Mutex live_mu(absl::kConstInit);
absl::flat_hash_set<const ltx_runtime*>& LiveRuntimes() {
  static auto* const live = new absl::flat_hash_set<const ltx_runtime*>();  // Under live_mu.
  return *live;
}

// The reset generation that a per-rank call's options name, read as their version's struct
// (ReadVersioned: the field's default, -1, before 0.3) where it names one (>= 0); nullopt
// otherwise (NULL options, a struct of no version), as for "any".
absl::optional<uint64_t> GenerationOf(const ltx_call_options* call) {
  if (call == nullptr) return absl::nullopt;
  const absl::StatusOr<ltx_call_options> read =
      ReadVersioned(call, &FillCallOptionsDefaults, kCallOptionsSizes, "ltx_call_options");
  if (!read.ok() || read->generation < 0) return absl::nullopt;
  return static_cast<uint64_t>(read->generation);
}

// `refused`, after stopping `runtime` with it where that is a live Runtime: a rank whose per-rank
// call (with options `call`, which may be NULL) the C layer refuses leaves its peers waiting in
// their op, and its next call would pair with theirs (ltx::Runtime::Stop). A `rank` that is none
// of the Runtime's, or a call of another reset generation (ltx::CheckGeneration: ABORTED for an
// older one, a straggler that belongs to no op of the current one), is that error instead, and
// stops nothing, as the library's per-rank calls do.
absl::Status StopOnRefusal(ltx_runtime* runtime, int rank, const ltx_call_options* call,
                           const absl::Status& refused) {
  {
    absl::MutexLock lock(&live_mu);
    if (!LiveRuntimes().contains(runtime)) return refused;
  }
  const int world = runtime->runtime->world_size();
  if (rank < 0 || rank >= world) {
    return absl::InvalidArgumentError(absl::StrFormat("rank %d is outside [0, %d)", rank, world));
  }
  LTX_RETURN_IF_ERROR(
      ltx::CheckGeneration(rank, GenerationOf(call), runtime->runtime->generation()));
  return runtime->runtime->Stop(refused);
}

// The body of a coordinated call of `tensors` tensors (ltx_all_gather, ltx_all_to_all_tensors,
// ...) with a C shape `CShape` and every rank's C buffers `CBuffers`.
template <typename CShape, typename CBuffers>
int CoordinatedCall(ltx_runtime* runtime, const CShape* shape, int tensors,
                    const CBuffers* buffers, int num_buffers, const ltx_call_options* call,
                    ltx_op** op) {
  return Guarded([&]() -> absl::Status {
    if (op != nullptr) *op = nullptr;  // NULL on every error, as the header promises.
    absl::Status status = CheckRuntime(runtime);
    if (status.ok()) status = CheckNotNull(op, "op");
    if (status.ok()) status = CheckArray(buffers, num_buffers, "buffers");
    if (!status.ok()) return status;
    LTX_RETURN_IF_ERROR(CheckTensors(tensors));
    auto cc_shape = ToShape(shape, tensors);
    if (!cc_shape.ok()) return cc_shape.status();
    absl::StatusOr<ltx::CallOptions> cc_call = ToCallOptions(call, &*cc_shape);
    if (!cc_call.ok()) return cc_call.status();
    std::vector<decltype(ToRankBuffers(*buffers, tensors))> cc_buffers;
    cc_buffers.reserve(num_buffers);
    for (int r = 0; r < num_buffers; ++r) cc_buffers.push_back(ToRankBuffers(buffers[r], tensors));
    absl::StatusOr<ltx::CollectiveHandle> handle =
        Launch(*runtime->runtime, *cc_shape, cc_buffers, *cc_call);
    if (!handle.ok()) return handle.status();
    *op = new ltx_op{*std::move(handle)};
    return absl::OkStatus();
  });
}

// The body of a per-rank call of `tensors` tensors (ltx_all_gather_rank,
// ltx_all_to_all_tensors_rank, ...).
template <typename CShape, typename CBuffers>
int PerRankCall(ltx_runtime* runtime, int rank, const CShape* shape, int tensors,
                const CBuffers* buffers, const ltx_call_options* call) {
  return Guarded([&]() -> absl::Status {
    LTX_RETURN_IF_ERROR(CheckRuntime(runtime));
    absl::Status status = CheckNotNull(buffers, "buffers");
    if (status.ok()) status = CheckTensors(tensors);
    if (!status.ok()) return StopOnRefusal(runtime, rank, call, status);
    auto cc_shape = ToShape(shape, tensors);
    if (!cc_shape.ok()) return StopOnRefusal(runtime, rank, call, cc_shape.status());
    absl::StatusOr<ltx::CallOptions> cc_call = ToCallOptions(call, &*cc_shape);
    if (!cc_call.ok()) return StopOnRefusal(runtime, rank, call, cc_call.status());
    return LaunchRank(*runtime->runtime, rank, *cc_shape, ToRankBuffers(*buffers, tensors),
                      *cc_call);
  });
}

}  // namespace

extern "C" {

int ltx_version(void) { return LTX_VERSION_CODE; }

const char* ltx_code_string(int code) {
  constexpr int kCodes = static_cast<int>(sizeof(kCodeNames) / sizeof(kCodeNames[0]));
  return code >= 0 && code < kCodes ? kCodeNames[code] : "UNKNOWN_CODE";
}

const char* ltx_last_error(void) {
  const char* fixed = FixedLastError();
  return fixed != nullptr ? fixed : LastError().c_str();
}

int(ltx_runtime_options_init)(ltx_runtime_options* options) {
  return ltx_runtime_options_init_sized(options, sizeof(ltx_runtime_options));
}

int(ltx_call_options_init)(ltx_call_options* call) {
  return ltx_call_options_init_sized(call, sizeof(ltx_call_options));
}

int ltx_runtime_options_init_sized(ltx_runtime_options* options, size_t size) {
  return Guarded([&]() -> absl::Status {
    return InitVersioned(options, size, &FillRuntimeOptionsDefaults, kRuntimeOptionsSizes,
                         "options");
  });
}

int ltx_call_options_init_sized(ltx_call_options* call, size_t size) {
  return Guarded([&]() -> absl::Status {
    return InitVersioned(call, size, &FillCallOptionsDefaults, kCallOptionsSizes, "call");
  });
}

int ltx_runtime_create(const ltx_runtime_options* options, ltx_runtime** runtime) {
  return Guarded([&]() -> absl::Status {
    absl::Status status = CheckNotNull(runtime, "runtime");
    if (!status.ok()) return status;
    *runtime = nullptr;
    absl::StatusOr<ltx::RuntimeOptions> cc_options = ToRuntimeOptions(options);
    if (!cc_options.ok()) return cc_options.status();
    absl::StatusOr<std::unique_ptr<ltx::Runtime>> created = ltx::Runtime::Create(*cc_options);
    if (!created.ok()) return created.status();
    *runtime = new ltx_runtime{*std::move(created)};
    absl::MutexLock lock(&live_mu);
    LiveRuntimes().insert(*runtime);
    return absl::OkStatus();
  });
}

int ltx_runtime_destroy(ltx_runtime* runtime) {
  return Guarded([&]() -> absl::Status {
    absl::Status status = CheckRuntime(runtime);
    if (!status.ok()) return status;
    {
      absl::MutexLock lock(&live_mu);
      LiveRuntimes().erase(runtime);
    }
    delete runtime;
    return status;
  });
}

int ltx_runtime_world_size(const ltx_runtime* runtime, int* world_size) {
  return Guarded([&]() -> absl::Status {
    absl::Status status = CheckRuntime(runtime);
    if (!status.ok()) return status;
    return Store(runtime->runtime->world_size(), world_size, "world_size");
  });
}

int ltx_runtime_device(const ltx_runtime* runtime, int rank, int* device) {
  return Guarded([&]() -> absl::Status {
    absl::Status status = CheckRuntime(runtime);
    if (!status.ok()) return status;
    const std::vector<int>& devices = runtime->runtime->devices();
    if (rank < 0 || static_cast<size_t>(rank) >= devices.size()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("rank %d is outside [0, %d)", rank, devices.size()));
    }
    return Store(devices[rank], device, "device");
  });
}

int ltx_runtime_transport(const ltx_runtime* runtime, int* transport) {
  return Guarded([&]() -> absl::Status {
    absl::Status status = CheckRuntime(runtime);
    if (!status.ok()) return status;
    return Store(ToCEnum(runtime->runtime->transport(), kTransports), transport, "transport");
  });
}

int ltx_runtime_generation(const ltx_runtime* runtime, uint64_t* generation) {
  return Guarded([&]() -> absl::Status {
    absl::Status status = CheckRuntime(runtime);
    if (status.ok()) status = CheckNotNull(generation, "generation");
    if (status.ok()) *generation = runtime->runtime->generation();
    return status;
  });
}

int ltx_all_gather(ltx_runtime* runtime, const ltx_allgather_shape* shape,
                   const ltx_rank_buffers* buffers, int num_buffers, const ltx_call_options* call,
                   ltx_op** op) {
  return CoordinatedCall(runtime, shape, 1, buffers, num_buffers, call, op);
}

int ltx_all_to_all(ltx_runtime* runtime, const ltx_alltoall_shape* shape,
                   const ltx_rank_buffers* buffers, int num_buffers, const ltx_call_options* call,
                   ltx_op** op) {
  return CoordinatedCall(runtime, shape, 1, buffers, num_buffers, call, op);
}

int ltx_op_wait(ltx_op* op, int64_t timeout_us) {
  return Guarded([&]() -> absl::Status {
    absl::Status status = CheckNotNull(op, "op");
    if (!status.ok()) return status;
    return op->handle.Wait(absl::Microseconds(timeout_us));
  });
}

int ltx_op_destroy(ltx_op* op) {
  return Guarded([&]() -> absl::Status {
    absl::Status status = CheckNotNull(op, "op");
    if (status.ok()) delete op;
    return status;
  });
}

int ltx_all_gather_rank(ltx_runtime* runtime, int rank, const ltx_allgather_shape* shape,
                        const ltx_rank_buffers* buffers, const ltx_call_options* call) {
  return PerRankCall(runtime, rank, shape, 1, buffers, call);
}

int ltx_all_to_all_rank(ltx_runtime* runtime, int rank, const ltx_alltoall_shape* shape,
                        const ltx_rank_buffers* buffers, const ltx_call_options* call) {
  return PerRankCall(runtime, rank, shape, 1, buffers, call);
}

int ltx_all_gather_tensors(ltx_runtime* runtime, const ltx_allgather_shape* shape,
                           int num_tensors, const ltx_tensor_buffers* buffers, int num_buffers,
                           const ltx_call_options* call, ltx_op** op) {
  return CoordinatedCall(runtime, shape, num_tensors, buffers, num_buffers, call, op);
}

int ltx_all_gather_tensors_rank(ltx_runtime* runtime, int rank, const ltx_allgather_shape* shape,
                                int num_tensors, const ltx_tensor_buffers* buffers,
                                const ltx_call_options* call) {
  return PerRankCall(runtime, rank, shape, num_tensors, buffers, call);
}

int ltx_all_to_all_tensors(ltx_runtime* runtime, const ltx_alltoall_shape* shape,
                           int num_tensors, const ltx_tensor_buffers* buffers, int num_buffers,
                           const ltx_call_options* call, ltx_op** op) {
  return CoordinatedCall(runtime, shape, num_tensors, buffers, num_buffers, call, op);
}

int ltx_all_to_all_tensors_rank(ltx_runtime* runtime, int rank, const ltx_alltoall_shape* shape,
                                int num_tensors, const ltx_tensor_buffers* buffers,
                                const ltx_call_options* call) {
  return PerRankCall(runtime, rank, shape, num_tensors, buffers, call);
}

int ltx_all_reduce(ltx_runtime* runtime, const ltx_allreduce_shape* shape,
                   const ltx_rank_buffers* buffers, int num_buffers, const ltx_call_options* call,
                   ltx_op** op) {
  return CoordinatedCall(runtime, shape, 1, buffers, num_buffers, call, op);
}

int ltx_all_reduce_rank(ltx_runtime* runtime, int rank, const ltx_allreduce_shape* shape,
                        const ltx_rank_buffers* buffers, const ltx_call_options* call) {
  return PerRankCall(runtime, rank, shape, 1, buffers, call);
}

int ltx_reduce_scatter(ltx_runtime* runtime, const ltx_reduce_scatter_shape* shape,
                       const ltx_rank_buffers* buffers, int num_buffers,
                       const ltx_call_options* call, ltx_op** op) {
  return CoordinatedCall(runtime, shape, 1, buffers, num_buffers, call, op);
}

int ltx_reduce_scatter_rank(ltx_runtime* runtime, int rank, const ltx_reduce_scatter_shape* shape,
                            const ltx_rank_buffers* buffers, const ltx_call_options* call) {
  return PerRankCall(runtime, rank, shape, 1, buffers, call);
}

int ltx_all_reduce_rmsnorm(ltx_runtime* runtime, const ltx_allreduce_rmsnorm_shape* shape,
                           const ltx_rmsnorm_buffers* buffers, int num_buffers,
                           const ltx_call_options* call, ltx_op** op) {
  return CoordinatedCall(runtime, shape, 1, buffers, num_buffers, call, op);
}

int ltx_all_reduce_rmsnorm_rank(ltx_runtime* runtime, int rank,
                                const ltx_allreduce_rmsnorm_shape* shape,
                                const ltx_rmsnorm_buffers* buffers, const ltx_call_options* call) {
  return PerRankCall(runtime, rank, shape, 1, buffers, call);
}

int ltx_runtime_synchronize(ltx_runtime* runtime, int64_t timeout_us) {
  return Guarded([&]() -> absl::Status {
    absl::Status status = CheckRuntime(runtime);
    if (!status.ok()) return status;
    return runtime->runtime->Synchronize(absl::Microseconds(timeout_us));
  });
}

int ltx_runtime_status(ltx_runtime* runtime) {
  return Guarded([&]() -> absl::Status {
    absl::Status status = CheckRuntime(runtime);
    if (!status.ok()) return status;
    return runtime->runtime->status();
  });
}

int ltx_runtime_stop(ltx_runtime* runtime, int code, const char* message) {
  return Guarded([&]() -> absl::Status {
    absl::Status status = CheckRuntime(runtime);
    if (status.ok()) status = CheckNotNull(message, "message");
    if (!status.ok()) return status;
    if (code <= LTX_OK || code > LTX_UNAUTHENTICATED) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "code = %d: pass an error code, LTX_CANCELLED to LTX_UNAUTHENTICATED", code));
    }
    runtime->runtime->Stop(absl::Status(static_cast<absl::StatusCode>(code), message))
        .IgnoreError();  // The error it stopped with, which is not this call's.
    return absl::OkStatus();
  });
}

int ltx_runtime_reset(ltx_runtime* runtime, int64_t timeout_us) {
  return Guarded([&]() -> absl::Status {
    absl::Status status = CheckRuntime(runtime);
    if (!status.ok()) return status;
    return runtime->runtime->Reset(absl::Microseconds(timeout_us));
  });
}

}  // extern "C"
