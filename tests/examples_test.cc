// The code examples of README.md and ltx/runtime.h, compiled as they are written (the
// examples_in_sync_test checks that they are copied here verbatim), and run where that means
// something: without GPUs each example must stop at Runtime::Create with FAILED_PRECONDITION.
// The examples include only the public headers.
#include <cstdint>
#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "ltx/runtime.h"

namespace {

// The example at the top of ltx/runtime.h.
absl::Status RuntimeHeaderExample(int rank, const std::vector<ltx::RankBuffers>& buffers) {
  // [runtime.h example]
  ltx::RuntimeOptions options;
  options.devices = {0, 1, 2, 3};
  LTX_ASSIGN_OR_RETURN(std::unique_ptr<ltx::Runtime> runtime, ltx::Runtime::Create(options));
  std::vector<int64_t> counts = {100, 80, 0, 120};  // Must outlive the calls that use it.
  ltx::AllGatherShape shape{ltx::DataType::kBFloat16, /*batch=*/1, /*hidden=*/4096, counts};
  // Coordinated call: every rank's buffers at once, from any thread.
  LTX_RETURN_IF_ERROR(runtime->AllGatherAndWait(shape, buffers, absl::Seconds(30)));
  // Per-rank call: from each GPU's own server thread, no host synchronisation, capturable.
  LTX_RETURN_IF_ERROR(runtime->AllGatherRank(rank, shape, buffers[rank]));
  // [end]
  return absl::OkStatus();
}

// The C++ example of README.md.
absl::Status ReadmeExample(int rank, void* in0, void* in1, void* in2, void* in3, void* out0,
                           void* out1, void* out2, void* out3, cudaStream_t stream0,
                           cudaStream_t stream1, cudaStream_t stream2, cudaStream_t stream3) {
  const void* in[] = {in0, in1, in2, in3};
  void* out[] = {out0, out1, out2, out3};
  cudaStream_t stream[] = {stream0, stream1, stream2, stream3};
  // [README example]
  ltx::RuntimeOptions options;
  options.devices = {0, 1, 2, 3};              // rank order; any subset, any order, e.g. {3, 1}
  options.timeout = absl::Seconds(10);         // how long a GPU waits for its peers
  absl::StatusOr<std::unique_ptr<ltx::Runtime>> runtime = ltx::Runtime::Create(options);
  if (!runtime.ok()) return runtime.status();  // e.g. FAILED_PRECONDITION: no CUDA GPU is visible

  std::vector<int64_t> counts = {100, 80, 0, 120};  // uneven, zeros allowed; must outlive the call
  ltx::AllGatherShape shape;
  shape.dtype = ltx::DataType::kBFloat16;
  shape.batch = 1;
  shape.hidden = 4096;
  shape.token_counts = counts;

  // 1. Coordinated call, from any thread: every rank's buffers at once. It returns when all
  //    kernels are enqueued; the handle waits with a timeout.
  std::vector<ltx::RankBuffers> buffers = {{in0, out0, stream0}, {in1, out1, stream1},
                                           {in2, out2, stream2}, {in3, out3, stream3}};
  absl::Status status = (*runtime)->AllGatherAndWait(shape, buffers, absl::Seconds(30));

  // 2. Per-rank call, from each GPU's own server thread. There is no host rendezvous and no
  //    host synchronisation, and it can be captured into a CUDA graph.
  status = (*runtime)->AllGatherRank(rank, shape, {in[rank], out[rank], stream[rank]});
  // [end]
  return status;
}

// The example of ltx/docs/alltoall.md: compiled only (it needs four GPUs and real buffers).
[[maybe_unused]] absl::Status ReadmeAllToAllExample(ltx::Runtime* runtime, int rank,
                                   const std::vector<ltx::RankBuffers>& buffers, const void** q,
                                   void** q_heads, cudaStream_t* stream) {
  // [all-to-all guide example]
  std::vector<int64_t> counts = {3840, 3840, 3840, 3840};  // Must outlive the calls.
  ltx::AllToAllShape shape;
  shape.dtype = ltx::DataType::kBFloat16;
  shape.heads = 32;
  shape.head_dim = 128;
  shape.token_counts = counts;
  shape.direction = ltx::AllToAllDirection::kSeqToHeads;
  absl::Status status = runtime->AllToAllAndWait(shape, buffers, absl::Seconds(30));  // coordinated
  status = runtime->AllToAllRank(rank, shape, {q[rank], q_heads[rank], stream[rank]});  // per rank
  // [end]
  return status;
}

bool HasGpu() {
  int count = 0;
  const bool ok = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  cudaGetLastError();
  return ok;
}

TEST(ExamplesTest, RuntimeHeaderExampleStopsAtCreateWithoutGpus) {
  if (HasGpu()) GTEST_SKIP() << "GPUs are visible: the example's null buffers are not runnable";
  const std::vector<ltx::RankBuffers> buffers(4);
  EXPECT_TRUE(absl::IsFailedPrecondition(RuntimeHeaderExample(0, buffers)));
}

TEST(ExamplesTest, ReadmeExampleStopsAtCreateWithoutGpus) {
  if (HasGpu()) GTEST_SKIP() << "GPUs are visible: the example's null buffers are not runnable";
  const absl::Status status = ReadmeExample(0, nullptr, nullptr, nullptr, nullptr, nullptr,
                                            nullptr, nullptr, nullptr, nullptr, nullptr,
                                            nullptr, nullptr);
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
}

}  // namespace
