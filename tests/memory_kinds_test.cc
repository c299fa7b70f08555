// GPU test: the AllGather with input and output buffers of every kind of memory users'
// allocators hand out (tests/memory_kind_buffer.h): cudaMalloc, stream-ordered pools, and the
// virtual memory API with access for the owner only, also spanning two mappings. For each kind
// every call, in both call styles and on every protocol, either gathers byte-exact (random
// inputs, poisoned outputs and guards) or is refused with InvalidArgument (cudaMalloc memory
// must gather), and afterwards the CUDA context still works on every GPU. A peer's store into
// memory it may not write faults and kills the CUDA context of the whole process, so each kind
// runs in a child process of this binary (tests/child_process.h), and the test checks the
// child's exit code and output. Skips, with the reason, with fewer than 2 GPUs.
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "ltx/cuda_status.h"
#include "ltx/runtime.h"
#include "ltx/status_macros.h"
#include "tests/child_process.h"
#include "tests/memory_kind_buffer.h"
#include "tools/testing/allgather_harness.h"
#include "tools/testing/gpu_fixture.h"

namespace ltx {
namespace {

// Names the memory kind in a child process; unset in the parent.
constexpr char kKindVariable[] = "LTX_MEMORY_KIND";
constexpr char kChildSuite[] = "MemoryKindsChild";
constexpr char kChildTest[] = "GatherWithThisKind";
// Lines the child prints for the parent.
constexpr char kSummaryPrefix[] = "memory kind ";
constexpr char kSkipPrefix[] = "child skipped: ";
constexpr char kContextLine[] = "context: usable on every GPU";
// A child takes seconds; a faulting one fails fast too (the Runtime's timeout is 10 s).
constexpr absl::Duration kChildTimeout = absl::Seconds(90);

// ---------------------------------------------------------------------------------- the child

struct Call {
  AllGatherCase c;
  Protocol protocol = Protocol::kAuto;
  CallStyle style = CallStyle::kCoordinated;

  std::string ToString() const {
    const char* names[] = {"auto", "direct", "one-trip", "copy-engine"};
    return absl::StrCat(c.ToString(), " protocol=", names[static_cast<int>(protocol)],
                        style == CallStyle::kCoordinated ? " coordinated" : " per-rank");
  }
};

// A small case on the one-trip and direct paths, and a 3 MiB output (which spans both mappings
// of kTwoMappings) on the automatic, direct and copy-engine paths; each in both call styles.
std::vector<Call> Calls(int world) {
  AllGatherCase small;
  small.dtype = DataType::kBFloat16;
  small.hidden = 1024;
  AllGatherCase large = small;
  large.hidden = 4096;
  constexpr int64_t kLargeTokens = 384;
  int64_t assigned = 0;
  for (int rank = 0; rank < world; ++rank) {
    small.token_counts.push_back(5 + rank);
    // Uneven: rank r gets a share proportional to r + 1; the last rank takes the rest.
    const int64_t count = rank + 1 < world ? 2 * (rank + 1) * kLargeTokens / (world * (world + 1))
                                           : kLargeTokens - assigned;
    large.token_counts.push_back(count);
    assigned += count;
  }
  std::vector<Call> calls;
  for (CallStyle style : {CallStyle::kCoordinated, CallStyle::kPerRankThreads}) {
    for (Protocol protocol : {Protocol::kOneTrip, Protocol::kDirect}) {
      calls.push_back({small, protocol, style});
    }
    for (Protocol protocol : {Protocol::kAuto, Protocol::kDirect, Protocol::kCopyEngine}) {
      calls.push_back({large, protocol, style});
    }
  }
  return calls;
}

// Each rank's input, and its output with kGuardBytes before and after, of one kind of memory.
struct KindBuffers {
  std::vector<int> devices;  // Each rank's GPU.
  std::vector<std::unique_ptr<MemoryKindBuffer>> inputs;
  std::vector<std::unique_ptr<MemoryKindBuffer>> output_areas;
};

absl::StatusOr<KindBuffers> AllocateKindBuffers(MemoryKind kind, const std::vector<int>& devices,
                                                const std::vector<Call>& calls) {
  const int world = static_cast<int>(devices.size());
  int64_t input_bytes = 1;
  int64_t output_bytes = 1;
  for (const Call& call : calls) {
    LTX_ASSIGN_OR_RETURN(const AllGatherLayout layout, ComputeLayout(call.c.Shape(), world));
    output_bytes = std::max(output_bytes, layout.output_bytes);
    for (int rank = 0; rank < world; ++rank) {
      input_bytes = std::max(input_bytes, layout.InputBytes(rank));
    }
  }
  KindBuffers buffers;
  buffers.devices = devices;
  for (int rank = 0; rank < world; ++rank) {
    LTX_ASSIGN_OR_RETURN(auto input,
                         MemoryKindBuffer::Allocate(kind, devices[rank], input_bytes));
    LTX_ASSIGN_OR_RETURN(auto output,
                         MemoryKindBuffer::Allocate(kind, devices[rank],
                                                    kGuardBytes + output_bytes + kGuardBytes));
    buffers.inputs.push_back(std::move(input));
    buffers.output_areas.push_back(std::move(output));
  }
  return buffers;
}

absl::Status Copy(void* to, const void* from, int64_t bytes, int device) {
  LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(device), "cudaSetDevice"));
  return CudaStatus(cudaMemcpy(to, from, bytes, cudaMemcpyDeviceToDevice),
                    absl::StrCat("cudaMemcpy on GPU ", device));
}

// The harness's output area of `rank` (its output with the guard before it).
uint8_t* HarnessOutputArea(const AllGatherHarness& harness, int rank) {
  return static_cast<uint8_t*>(harness.Buffers(rank).output) - kGuardBytes;
}

// Copies the harness's current case into `buffers` (inputs, and the poisoned output areas), and
// returns the RankBuffers of `buffers` for it.
absl::StatusOr<std::vector<RankBuffers>> LoadCase(const AllGatherHarness& harness,
                                                  const KindBuffers& buffers) {
  const AllGatherLayout& layout = harness.layout();
  std::vector<RankBuffers> rank_buffers;
  for (int rank = 0; rank < harness.world_size(); ++rank) {
    const RankBuffers source = harness.Buffers(rank);
    LTX_RETURN_IF_ERROR(
        Copy(buffers.inputs[rank]->data(), source.input, layout.InputBytes(rank),
             buffers.devices[rank]));
    LTX_RETURN_IF_ERROR(Copy(buffers.output_areas[rank]->data(), HarnessOutputArea(harness, rank),
                             kGuardBytes + layout.output_bytes + kGuardBytes,
                             buffers.devices[rank]));
    rank_buffers.push_back({buffers.inputs[rank]->data(),
                            buffers.output_areas[rank]->data() + kGuardBytes, source.stream});
  }
  return rank_buffers;
}

// Copies every output area of `buffers` back into the harness, which verifies it byte-exact.
absl::Status VerifyCase(AllGatherHarness& harness, const KindBuffers& buffers) {
  const int64_t area_bytes = kGuardBytes + harness.layout().output_bytes + kGuardBytes;
  for (int rank = 0; rank < harness.world_size(); ++rank) {
    LTX_RETURN_IF_ERROR(Copy(HarnessOutputArea(harness, rank), buffers.output_areas[rank]->data(),
                             area_bytes, buffers.devices[rank]));
  }
  return harness.Verify();
}

// Runs `call` on `buffers`: the coordinated call and its wait, or per-rank calls from one thread
// per rank followed by a synchronisation of every rank's stream.
absl::Status Gather(Runtime& runtime, const std::vector<RankBuffers>& buffers, const Call& call) {
  CallOptions options;
  options.protocol = call.protocol;
  const AllGatherShape shape = call.c.Shape();
  if (call.style == CallStyle::kCoordinated) {
    return runtime.AllGatherAndWait(shape, buffers, kTestWait, options);
  }
  std::vector<absl::Status> results(buffers.size());
  std::vector<std::thread> threads;
  for (size_t rank = 0; rank < buffers.size(); ++rank) {
    threads.emplace_back([&, rank] {
      results[rank] = runtime.AllGatherRank(static_cast<int>(rank), shape, buffers[rank], options);
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const absl::Status& result : results) LTX_RETURN_IF_ERROR(result);
  for (size_t rank = 0; rank < buffers.size(); ++rank) {
    LTX_RETURN_IF_ERROR(CudaStatus(cudaStreamSynchronize(buffers[rank].stream),
                                   absl::StrCat("cudaStreamSynchronize(rank ", rank, ")")));
  }
  return runtime.status();
}

absl::Status GatherOnce(GpuFixture& f, const KindBuffers& buffers, const Call& call) {
  LTX_RETURN_IF_ERROR(f.harness->Prepare(call.c));
  LTX_ASSIGN_OR_RETURN(const std::vector<RankBuffers> rank_buffers, LoadCase(*f.harness, buffers));
  LTX_RETURN_IF_ERROR(Gather(*f.runtime, rank_buffers, call));
  return VerifyCase(*f.harness, buffers);
}

// OK if a cudaMemset and a cudaDeviceSynchronize succeed on each GPU of `gpus`.
absl::Status CheckContexts(const std::vector<int>& gpus) {
  for (int device : gpus) {
    const std::string on = absl::StrCat(" on GPU ", device);
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(device), absl::StrCat("cudaSetDevice", on)));
    void* memory = nullptr;
    LTX_RETURN_IF_ERROR(CudaStatus(cudaMalloc(&memory, 4096), absl::StrCat("cudaMalloc", on)));
    const absl::Status set = CudaStatus(cudaMemset(memory, 0x5a, 4096), "cudaMemset" + on);
    const absl::Status synced =
        CudaStatus(cudaDeviceSynchronize(), absl::StrCat("cudaDeviceSynchronize", on));
    cudaFree(memory);
    LTX_RETURN_IF_ERROR(set);
    LTX_RETURN_IF_ERROR(synced);
  }
  return absl::OkStatus();
}

// Runs every call on buffers of one kind; registered only in child processes.
class MemoryKindsChildTest : public ::testing::Test {
 public:
  explicit MemoryKindsChildTest(absl::optional<MemoryKind> kind) : kind_(kind) {}

  void TestBody() override {
    ASSERT_TRUE(kind_.has_value()) << kKindVariable << " names no memory kind";
    LTX_REQUIRE_RANKS(2);
    const std::vector<int> devices = TestRankDevices(2);
    const int world = static_cast<int>(devices.size());
    GpuFixture f = MakeGpuFixture(devices);
    ASSERT_NE(f.runtime, nullptr);
    if (f.runtime->transport() != Transport::kPeerStores) {
      std::cout << kSkipPrefix << "the GPUs lack peer access, so ltx uses the copy engines"
                << std::endl;
      LTX_SKIP_GPU_TEST("the GPUs lack peer access");
    }
    const std::vector<Call> calls = Calls(world);
    absl::StatusOr<KindBuffers> buffers = AllocateKindBuffers(*kind_, devices, calls);
    ASSERT_TRUE(buffers.ok()) << buffers.status();
    int gathered = 0;
    std::vector<std::string> refusals;
    for (const Call& call : calls) {
      const absl::Status status = GatherOnce(f, *buffers, call);
      if (status.ok()) {
        ++gathered;
      } else if (absl::IsInvalidArgument(status) && *kind_ != MemoryKind::kMalloc) {
        refusals.push_back(absl::StrCat(call.ToString(), ": ", status.ToString()));
        if (!f.runtime->status().ok()) {
          ASSERT_TRUE(f.runtime->Reset(kTestWait).ok());
        }
      } else {
        ADD_FAILURE() << call.ToString() << ": " << status;
        break;
      }
    }
    std::cout << kSummaryPrefix << MemoryKindName(*kind_) << ": " << gathered
              << " call(s) gathered byte-exact, " << refusals.size() << " refused"
              << (refusals.empty() ? "" : absl::StrCat(" (first: ", refusals[0], ")")) << std::endl;
    const absl::Status contexts = CheckContexts(DistinctDevices(devices));
    EXPECT_TRUE(contexts.ok()) << contexts;
    if (contexts.ok()) std::cout << kContextLine << std::endl;
  }

 private:
  const absl::optional<MemoryKind> kind_;
};

// The child test exists only in the child processes, where kKindVariable is set.
[[maybe_unused]] const bool kChildRegistered = [] {
  const char* name = std::getenv(kKindVariable);
  if (name == nullptr) return false;
  const absl::optional<MemoryKind> kind = ParseMemoryKind(name);
  ::testing::RegisterTest(kChildSuite, kChildTest, nullptr, name, __FILE__, __LINE__,
                          [kind]() -> ::testing::Test* { return new MemoryKindsChildTest(kind); });
  return true;
}();

// --------------------------------------------------------------------------------- the parent

// The first line of `output` that starts with `prefix`, or "".
std::string LineStartingWith(const std::string& output, absl::string_view prefix) {
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    if (absl::StartsWith(line, prefix)) return std::string(line);
  }
  return "";
}

class MemoryKindsTest : public ::testing::TestWithParam<MemoryKind> {};

TEST_P(MemoryKindsTest, GathersByteExactOrRefusesAndTheContextSurvives) {
  LTX_REQUIRE_RANKS(2);
  const char* name = MemoryKindName(GetParam());
  absl::StatusOr<ChildResult> child = RunSelfAsChild(
      {absl::StrCat("--gtest_filter=", kChildSuite, ".", kChildTest), "--gtest_color=no"},
      {{kKindVariable, name}}, kChildTimeout);
  ASSERT_TRUE(child.ok()) << child.status();
  const std::string& output = child->output;
  const std::string context = absl::StrCat("memory kind ", name, "; the child's output:\n", output);
  if (absl::StrContains(output, "[  SKIPPED ]")) {
    LTX_SKIP_GPU_TEST(LineStartingWith(output, kSkipPrefix) << "\n" << context);
  }
  EXPECT_FALSE(child->timed_out) << "killed after " << kChildTimeout << "; " << context;
  EXPECT_EQ(child->signal, 0) << context;
  EXPECT_EQ(child->exit_code, 0) << context;
  EXPECT_TRUE(absl::StrContains(output, "[  PASSED  ] 1 test")) << context;
  EXPECT_TRUE(absl::StrContains(output, kContextLine)) << context;
  std::cout << LineStartingWith(output, kSummaryPrefix) << std::endl;
}

INSTANTIATE_TEST_SUITE_P(EveryKind, MemoryKindsTest, ::testing::ValuesIn(kAllMemoryKinds),
                         [](const ::testing::TestParamInfo<MemoryKind>& info) {
                           return std::string(MemoryKindName(info.param));
                         });

}  // namespace
}  // namespace ltx
