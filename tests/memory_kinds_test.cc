// GPU test: the AllGather and the all-to-all with input and output buffers of every kind of
// memory users' allocators hand out (tests/memory_kind_buffer.h): cudaMalloc, stream-ordered
// pools, and the virtual memory API with access for the owner only, also spanning two mappings.
// For each kind every call, in both call styles and on every protocol, moves the data byte-exact
// (random inputs, poisoned outputs and guards; the Runtime grants the peers access it needs); the
// kinds of the virtual memory API then release every mapping and map new memory at the same
// addresses, and every call runs again; afterwards the CUDA context still works on every GPU.
// A peer's store into memory it may not write faults and kills the CUDA context of the whole
// process, so each kind runs in a child
// process of this binary (tests/child_process.h), which inherits the layout switch, and the test
// checks the child's exit code and output.
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "ltx/cuda/cuda_status.h"
#include "ltx/runtime.h"
#include "ltx/status_macros.h"
#include "tests/child_process.h"
#include "tests/memory_kind_buffer.h"
#include "tools/testing/allgather_harness.h"
#include "tools/testing/alltoall_harness.h"
#include "tools/testing/gpu_fixture.h"
#include "tools/testing/rank_threads.h"

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

// One collective call of a case (AllGatherCase or AllToAllCase) on a protocol in a call style.
template <typename Case>
struct Call {
  Case c;
  Protocol protocol = Protocol::kAuto;
  CallStyle style = CallStyle::kCoordinated;

  std::string ToString() const {
    return absl::StrCat(c.ToString(), " protocol=", ProtocolName(protocol),
                        style == CallStyle::kCoordinated ? " coordinated" : " per-rank");
  }
};

// `total` tokens split unevenly over `world` ranks: rank r gets a share proportional to r + 1,
// the last rank the rest.
std::vector<int64_t> UnevenShares(int world, int64_t total) {
  std::vector<int64_t> counts;
  int64_t assigned = 0;
  for (int rank = 0; rank < world; ++rank) {
    const int64_t count =
        rank + 1 < world ? 2 * (rank + 1) * total / (world * (world + 1)) : total - assigned;
    counts.push_back(count);
    assigned += count;
  }
  return counts;
}

// `small` on the one-trip and direct paths, and `large` on the automatic, direct and copy-engine
// paths; each in both call styles.
template <typename Case>
std::vector<Call<Case>> CallsOf(const Case& small, const Case& large) {
  std::vector<Call<Case>> calls;
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

// The calls of `calls` that a Runtime on `devices` serves: without the copy-engine ones where it
// refuses the copy engines (CopyEnginesServe).
template <typename Case>
std::vector<Call<Case>> ServedOn(const std::vector<int>& devices, std::vector<Call<Case>> calls) {
  if (CopyEnginesServe(devices)) return calls;
  calls.erase(std::remove_if(calls.begin(), calls.end(),
                             [](const Call<Case>& call) {
                               return call.protocol == Protocol::kCopyEngine;
                             }),
              calls.end());
  return calls;
}

// AllGathers: a small case, and a 3 MiB output (which spans both mappings of kTwoMappings).
std::vector<Call<AllGatherCase>> Gathers(int world) {
  AllGatherCase small;
  small.dtype = DataType::kBFloat16;
  small.hidden = 1024;
  for (int rank = 0; rank < world; ++rank) small.token_counts.push_back(5 + rank);
  AllGatherCase large = small;
  large.hidden = 4096;
  large.token_counts = UnevenShares(world, 384);
  return CallsOf(small, large);
}

// All-to-alls, sequence -> heads and back, with an uneven head split in which the middle rank
// holds no heads: a small case, and one of about 3 MiB per rank.
std::vector<Call<AllToAllCase>> Exchanges(int world) {
  std::vector<Call<AllToAllCase>> calls;
  for (AllToAllDirection direction :
       {AllToAllDirection::kSeqToHeads, AllToAllDirection::kHeadsToSeq}) {
    AllToAllCase small;
    small.direction = direction;
    small.head_dim = 64;
    for (int rank = 0; rank < world; ++rank) small.head_counts.push_back(1 + rank % 2);
    small.head_counts[world / 2] = 0;
    small.heads = std::accumulate(small.head_counts.begin(), small.head_counts.end(), int64_t{0});
    small.token_counts = UnevenShares(world, 16 * world);
    AllToAllCase large = small;
    large.head_dim = 128;
    large.token_counts = UnevenShares(world, 12288 / small.heads * world);
    for (const Call<AllToAllCase>& call : CallsOf(small, large)) calls.push_back(call);
  }
  return calls;
}

// The most input and output bytes any rank of any case of `calls` needs.
struct BufferBytes {
  int64_t input = 1;
  int64_t output = 1;
};
void AddNeeds(const std::vector<Call<AllGatherCase>>& calls, int world, BufferBytes* bytes) {
  for (const auto& call : calls) {
    const AllGatherLayout layout = *ComputeAllGatherLayout(call.c.Shape(), world);
    for (int rank = 0; rank < world; ++rank) {
      bytes->input = std::max(bytes->input, layout.InputBytes(rank));
    }
    bytes->output = std::max(bytes->output, layout.output_bytes);
  }
}
void AddNeeds(const std::vector<Call<AllToAllCase>>& calls, int world, BufferBytes* bytes) {
  for (const auto& call : calls) {
    const AllToAllLayout layout = *ComputeAllToAllLayout(call.c.Shape(), world);
    for (int rank = 0; rank < world; ++rank) {
      bytes->input = std::max(bytes->input, layout.InputBytes(rank));
      bytes->output = std::max(bytes->output, layout.OutputBytes(rank));
    }
  }
}

// Each rank's input, and its output with kGuardBytes before and after, of one kind of memory.
struct KindBuffers {
  std::vector<int> devices;  // Each rank's GPU.
  std::vector<std::unique_ptr<MemoryKindBuffer>> inputs;
  std::vector<std::unique_ptr<MemoryKindBuffer>> output_areas;
};

absl::StatusOr<KindBuffers> AllocateKindBuffers(MemoryKind kind, const std::vector<int>& devices,
                                                const BufferBytes& bytes) {
  KindBuffers buffers;
  buffers.devices = devices;
  for (int device : devices) {
    LTX_ASSIGN_OR_RETURN(auto input, MemoryKindBuffer::Allocate(kind, device, bytes.input));
    LTX_ASSIGN_OR_RETURN(auto output, MemoryKindBuffer::Allocate(
                                          kind, device, kGuardBytes + bytes.output + kGuardBytes));
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

// Rank `rank`'s input and output bytes in the current case of a harness.
int64_t InputBytes(const AllGatherHarness& harness, int rank) {
  return harness.layout().InputBytes(rank);
}
int64_t OutputBytes(const AllGatherHarness& harness, int) { return harness.layout().output_bytes; }
int64_t InputBytes(const AllToAllHarness& harness, int rank) {
  return harness.layout().InputBytes(rank);
}
int64_t OutputBytes(const AllToAllHarness& harness, int rank) {
  return harness.layout().OutputBytes(rank);
}

// The harness's output area of `rank` (its output with the guard before it).
template <typename Harness>
uint8_t* HarnessOutputArea(const Harness& harness, int rank) {
  return static_cast<uint8_t*>(harness.Buffers(rank).output) - kGuardBytes;
}

// Copies the harness's current case into `buffers` (inputs, and the poisoned output areas), and
// returns the RankBuffers of `buffers` for it.
template <typename Harness>
absl::StatusOr<std::vector<RankBuffers>> LoadCase(const Harness& harness,
                                                  const KindBuffers& buffers) {
  std::vector<RankBuffers> rank_buffers;
  for (int rank = 0; rank < harness.world_size(); ++rank) {
    const RankBuffers source = harness.Buffers(rank);
    const int device = buffers.devices[rank];
    LTX_RETURN_IF_ERROR(
        Copy(buffers.inputs[rank]->data(), source.input, InputBytes(harness, rank), device));
    LTX_RETURN_IF_ERROR(Copy(buffers.output_areas[rank]->data(), HarnessOutputArea(harness, rank),
                             kGuardBytes + OutputBytes(harness, rank) + kGuardBytes, device));
    rank_buffers.push_back({buffers.inputs[rank]->data(),
                            buffers.output_areas[rank]->data() + kGuardBytes, source.stream});
  }
  // The copies ran on the legacy stream, which the ranks' non-blocking streams do not wait for
  // (and a copy between device buffers may return before it lands): let them land first.
  for (int rank = 0; rank < harness.world_size(); ++rank) {
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(buffers.devices[rank]), "cudaSetDevice"));
    LTX_RETURN_IF_ERROR(CudaStatus(cudaDeviceSynchronize(), "cudaDeviceSynchronize"));
  }
  return rank_buffers;
}

// Copies every output area of `buffers` back into the harness, which verifies it byte-exact.
template <typename Harness>
absl::Status VerifyCase(Harness& harness, const KindBuffers& buffers) {
  for (int rank = 0; rank < harness.world_size(); ++rank) {
    LTX_RETURN_IF_ERROR(Copy(HarnessOutputArea(harness, rank), buffers.output_areas[rank]->data(),
                             kGuardBytes + OutputBytes(harness, rank) + kGuardBytes,
                             buffers.devices[rank]));
  }
  return harness.Verify();
}

// Runs one call on `buffers` in `style`: `coordinated()` (which waits), or `rank_call(rank)`
// from one thread per rank followed by a synchronisation of every rank's stream.
absl::Status RunInStyle(Runtime& runtime, const std::vector<RankBuffers>& buffers,
                        CallStyle style, const std::function<absl::Status()>& coordinated,
                        const std::function<absl::Status(int rank)>& rank_call) {
  if (style == CallStyle::kCoordinated) return coordinated();
  LTX_RETURN_IF_ERROR(RunOnRankThreads(runtime.world_size(), rank_call));
  for (size_t rank = 0; rank < buffers.size(); ++rank) {
    LTX_RETURN_IF_ERROR(CudaStatus(cudaStreamSynchronize(buffers[rank].stream),
                                   absl::StrCat("cudaStreamSynchronize(rank ", rank, ")")));
  }
  return runtime.status();
}

CallOptions OptionsOf(Protocol protocol) {
  CallOptions options;
  options.protocol = protocol;
  return options;
}

// The coordinated call of either collective, and its wait.
absl::Status CallAndWait(Runtime& runtime, const AllGatherShape& shape,
                         const std::vector<RankBuffers>& buffers, const CallOptions& options) {
  return runtime.AllGatherAndWait(shape, buffers, kTestWait, options);
}
absl::Status CallAndWait(Runtime& runtime, const AllToAllShape& shape,
                         const std::vector<RankBuffers>& buffers, const CallOptions& options) {
  return runtime.AllToAllAndWait(shape, buffers, kTestWait, options);
}

// The per-rank call of either collective.
absl::Status CallRank(Runtime& runtime, int rank, const AllGatherShape& shape,
                      const RankBuffers& buffers, const CallOptions& options) {
  return runtime.AllGatherRank(rank, shape, buffers, options);
}
absl::Status CallRank(Runtime& runtime, int rank, const AllToAllShape& shape,
                      const RankBuffers& buffers, const CallOptions& options) {
  return runtime.AllToAllRank(rank, shape, buffers, options);
}

// Prepares `call`'s case in `harness`, runs it on `buffers` and verifies it byte-exact.
template <typename Harness, typename Case>
absl::Status RunOnce(Runtime& runtime, Harness& harness, const KindBuffers& buffers,
                     const Call<Case>& call) {
  LTX_RETURN_IF_ERROR(harness.Prepare(call.c));
  LTX_ASSIGN_OR_RETURN(const std::vector<RankBuffers> rank_buffers, LoadCase(harness, buffers));
  const auto shape = call.c.Shape();
  const CallOptions options = OptionsOf(call.protocol);
  LTX_RETURN_IF_ERROR(RunInStyle(
      runtime, rank_buffers, call.style,
      [&] { return CallAndWait(runtime, shape, rank_buffers, options); },
      [&](int rank) { return CallRank(runtime, rank, shape, rank_buffers[rank], options); }));
  return VerifyCase(harness, buffers);
}

// Runs every call of `calls` on `buffers`, each byte-exact; returns how many did.
template <typename Harness, typename Case>
int RunEvery(Runtime& runtime, Harness& harness, const KindBuffers& buffers,
             const std::vector<Call<Case>>& calls) {
  int done = 0;
  for (const Call<Case>& call : calls) {
    const absl::Status status = RunOnce(runtime, harness, buffers, call);
    EXPECT_TRUE(status.ok()) << call.ToString() << ": " << status;
    if (!status.ok()) break;
    ++done;
  }
  return done;
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
    const std::vector<Call<AllGatherCase>> gathers = ServedOn(devices, Gathers(world));
    const std::vector<Call<AllToAllCase>> exchanges = ServedOn(devices, Exchanges(world));
    BufferBytes bytes;
    AddNeeds(gathers, world, &bytes);
    AddNeeds(exchanges, world, &bytes);
    absl::StatusOr<KindBuffers> buffers = AllocateKindBuffers(*kind_, devices, bytes);
    ASSERT_TRUE(buffers.ok()) << buffers.status();
    absl::StatusOr<std::unique_ptr<AllToAllHarness>> exchange_harness =
        AllToAllHarness::Create(devices, bytes.input, bytes.output, /*seed=*/world * 613);
    ASSERT_TRUE(exchange_harness.ok()) << exchange_harness.status();
    const int gathered = RunEvery(*f.runtime, *f.harness, *buffers, gathers);
    const int exchanged = RunEvery(*f.runtime, **exchange_harness, *buffers, exchanges);
    std::cout << kSummaryPrefix << MemoryKindName(*kind_) << ": " << gathered << " of "
              << gathers.size() << " AllGather call(s) and " << exchanged << " of "
              << exchanges.size() << " all-to-all call(s) byte-exact";
    if (buffers->inputs[0]->remappable()) {
      // Every buffer released and mapped again at its address, with access for its owner only
      // (an expandable segment released and grown back): the Runtime, which granted the peers
      // access to the old mappings, must grant it to the new ones before any peer stores there.
      // (Where the ranks share one GPU there is nothing to grant; this proves it on 2+ GPUs.)
      for (int device : DistinctDevices(devices)) {  // No work may use a buffer remapped.
        ASSERT_EQ(cudaSetDevice(device), cudaSuccess);
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      }
      for (auto* all : {&buffers->inputs, &buffers->output_areas}) {
        for (const std::unique_ptr<MemoryKindBuffer>& buffer : *all) {
          const absl::Status remapped = buffer->Remap();
          ASSERT_TRUE(remapped.ok()) << remapped;
        }
      }
      const int regathered = RunEvery(*f.runtime, *f.harness, *buffers, gathers);
      const int reexchanged = RunEvery(*f.runtime, **exchange_harness, *buffers, exchanges);
      std::cout << "; mapped again at the same addresses: " << regathered << " of "
                << gathers.size() << " and " << reexchanged << " of " << exchanges.size();
    }
    std::cout << std::endl;
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

TEST_P(MemoryKindsTest, MovesByteExactAndTheContextSurvives) {
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
