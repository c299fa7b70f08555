// What ranks that share a GPU rely on from the GPU itself (kernels/PROTOCOL.md, "Ranks that
// share a GPU"): a kernel on one stream that waits for a kernel on another stream of the same
// GPU sees it run, for every ordered pair of the streams of eight ranks, whether the streams
// were idle (the host synchronised) or busy before, and with other streams created between
// them; with a kernel queued behind the waiting one (which holds back whatever shares its
// hardware queue); and with host calls made between the two launches (allocations, memsets,
// copies, frees, the virtual memory API's mapping and unmapping), which the CUDA guide says may
// serialise the GPU. A stall here is the GPU holding a
// co-located rank's kernel back behind a waiting one, which no protocol can undo.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <iostream>
#include <memory>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/memory_kind_buffer.h"
#include "tests/stream_handoff_kernels.h"
#include "tools/testing/test_ranks.h"
#include "tools/testing/visible_gpus.h"

namespace ltx {
namespace {

constexpr int kStreams = 8;
constexpr int kPairSlots = kStreams * kStreams;
constexpr uint64_t kDeadlineNs = 200'000'000;  // 200 ms: a hand-over takes microseconds.

// Streams of GPU 0, with `between` other streams created after each (as a test harness's
// buffers of other slots are), and the flag memory the hand-overs use.
class StreamHandoff {
 public:
  // With `recycled`, 40 streams are created and every other one destroyed first, so that the
  // streams of the test may reuse what they left.
  explicit StreamHandoff(int between, bool recycled = false) {
    EXPECT_EQ(cudaSetDevice(0), cudaSuccess);
    if (recycled) {
      std::vector<cudaStream_t> earlier(40);
      for (cudaStream_t& stream : earlier) {
        EXPECT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
      }
      for (size_t i = 0; i < earlier.size(); ++i) {
        if (i % 2 == 0) {
          EXPECT_EQ(cudaStreamDestroy(earlier[i]), cudaSuccess);
        } else {
          others_.push_back(earlier[i]);
        }
      }
    }
    for (int i = 0; i < kStreams; ++i) {
      cudaStream_t stream = nullptr;
      EXPECT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
      streams_.push_back(stream);
      for (int j = 0; j < between; ++j) {
        EXPECT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
        others_.push_back(stream);
      }
    }
    void* flags = nullptr;
    // One flag per pair, and one that the kernels queued behind set.
    EXPECT_EQ(cudaMalloc(&flags, sizeof(uint64_t) * (kPairSlots + 1)), cudaSuccess);
    EXPECT_EQ(cudaMemset(flags, 0, sizeof(uint64_t) * (kPairSlots + 1)), cudaSuccess);
    // The memset ran on the legacy stream, which the non-blocking streams do not wait for: a
    // zeroing that landed late could wipe a flag already set.
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    flags_ = static_cast<uint64_t*>(flags);
    void* seen = nullptr;
    EXPECT_EQ(cudaMallocHost(&seen, sizeof(uint32_t) * kPairSlots), cudaSuccess);
    seen_ = static_cast<uint32_t*>(seen);
  }
  ~StreamHandoff() {
    cudaDeviceSynchronize();
    for (cudaStream_t stream : streams_) cudaStreamDestroy(stream);
    for (cudaStream_t stream : others_) cudaStreamDestroy(stream);
    cudaFree(flags_);
    cudaFreeHost(seen_);
  }

  // Every ordered pair (waiter, setter) of distinct streams once per round, `rounds` times,
  // each pair with a flag of its own (the round number). With `idle` the host synchronises
  // after each pair, so every stream is idle when the next pair starts; without, a round's
  // pairs are all enqueued at once. With `queued_behind`, a second kernel follows the waiting
  // one on the waiter's stream before the setter is enqueued, as a rank's next op or compute
  // follows its collective: where the two streams share a hardware queue, that kernel (which
  // cannot start before the waiting one ends) holds the setter back. `between` (if set) runs on
  // the host after the waiting kernel is enqueued and before the setter is. With
  // `setter_second`, the setter follows another kernel on its own stream (as the second op of a
  // two-shot AllReduce follows the first). Returns the hand-overs that missed their deadline.
  int Stalls(int rounds, bool idle, bool queued_behind = false,
             const std::function<void()>& between = {}, bool setter_second = false) {
    int stalls = 0;
    for (int round = 1; round <= rounds; ++round) {
      for (int waiter = 0; waiter < kStreams; ++waiter) {
        for (int setter = 0; setter < kStreams; ++setter) {
          if (waiter == setter) continue;
          const int pair = waiter * kStreams + setter;
          seen_[pair] = 2;
          EXPECT_EQ(LaunchAwaitFlag(&flags_[pair], round, kDeadlineNs, &seen_[pair],
                                    streams_[waiter]),
                    cudaSuccess);
          if (queued_behind) {
            EXPECT_EQ(LaunchSetFlag(&flags_[kPairSlots], round, streams_[waiter]), cudaSuccess);
          }
          if (between) between();
          if (setter_second) {
            EXPECT_EQ(LaunchSetFlag(&flags_[kPairSlots], round, streams_[setter]), cudaSuccess);
          }
          EXPECT_EQ(LaunchSetFlag(&flags_[pair], round, streams_[setter]), cudaSuccess);
          if (idle) {
            EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
          }
        }
      }
      EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      for (int pair = 0; pair < kPairSlots; ++pair) {
        if (pair / kStreams != pair % kStreams) stalls += seen_[pair] == 1 ? 0 : 1;
      }
    }
    return stalls;
  }

 private:
  std::vector<cudaStream_t> streams_;
  std::vector<cudaStream_t> others_;
  uint64_t* flags_ = nullptr;
  uint32_t* seen_ = nullptr;
};

TEST(StreamHandoffTest, AWaitingKernelNeverHoldsBackTheKernelItWaitsFor) {
  if (VisibleGpuCount() == 0) LTX_SKIP_GPU_TEST("needs a GPU, none is visible");
  constexpr int kRounds = 4;
  constexpr int kPairs = kStreams * (kStreams - 1) * kRounds;
  for (int between : {0, 15}) {
    for (bool idle : {true, false}) {
      StreamHandoff handoff(between);
      const int stalls = handoff.Stalls(kRounds, idle);
      std::cout << "[ ltx      ] " << kStreams << " streams, " << between
                << " other streams created after each, " << (idle ? "idle" : "busy")
                << " before each hand-over: " << stalls << " of " << kPairs << " stalled"
                << std::endl;
      EXPECT_EQ(stalls, 0) << between << " streams between, " << (idle ? "idle" : "busy");
    }
  }
}

// Which streams share a hardware queue, seen through a kernel queued behind a waiting one (a
// stall means the pair shares a queue): streams created one after another, with other streams
// created between them, and after earlier streams were destroyed.
TEST(StreamHandoffTest, KernelsQueuedBehindAWaitingOneShowSharedHardwareQueues) {
  if (VisibleGpuCount() == 0) LTX_SKIP_GPU_TEST("needs a GPU, none is visible");
  constexpr int kPairs = kStreams * (kStreams - 1);
  struct Layout {
    int between;
    bool recycled;
  };
  for (const Layout layout : {Layout{0, false}, Layout{3, false}, Layout{15, false},
                              Layout{0, true}}) {
    StreamHandoff handoff(layout.between, layout.recycled);
    const int stalls = handoff.Stalls(/*rounds=*/1, /*idle=*/true, /*queued_behind=*/true);
    std::cout << "[ ltx      ] " << kStreams << " streams, " << layout.between
              << " other streams created after each"
              << (layout.recycled ? ", after 20 of 40 earlier streams were destroyed" : "")
              << ", a kernel queued behind each waiting one: " << stalls << " of " << kPairs
              << " stalled" << std::endl;
    // Measured on H200 (CUDA_DEVICE_MAX_CONNECTIONS=32): no layout stalls.
    EXPECT_EQ(stalls, 0);
  }
}

// Which host calls made between a waiting kernel and the kernel it waits for (as a co-located
// rank's thread makes them before its own launch) hold the second one back: a stall means the
// GPU serialises around the call (the CUDA guide's implicit synchronisation). The calls without
// a stall are what a process whose ranks share a GPU may make at any time.
TEST(StreamHandoffTest, HostCallsBetweenAWaitingKernelAndItsSetter) {
  if (VisibleGpuCount() == 0) LTX_SKIP_GPU_TEST("needs a GPU, none is visible");
  constexpr int kPairs = kStreams * (kStreams - 1);
  StreamHandoff handoff(/*between=*/0);
  void* scratch = nullptr;
  ASSERT_EQ(cudaMalloc(&scratch, 1 << 20), cudaSuccess);
  std::vector<void*> allocated;
  std::vector<uint8_t> host(4096, 1);
  std::vector<cudaStream_t> created;
  std::vector<cudaEvent_t> events;
  // What the frees release: one buffer per hand-over, allocated before any.
  std::vector<std::unique_ptr<MemoryKindBuffer>> to_free[2];
  for (int i = 0; i < 2; ++i) {
    for (int pair = 0; pair < kPairs; ++pair) {
      absl::StatusOr<std::unique_ptr<MemoryKindBuffer>> buffer = MemoryKindBuffer::Allocate(
          i == 0 ? MemoryKind::kMalloc : MemoryKind::kMapped, /*device=*/0, 1 << 20);
      ASSERT_TRUE(buffer.ok()) << buffer.status();
      to_free[i].push_back(std::move(*buffer));
    }
  }
  std::vector<std::unique_ptr<MemoryKindBuffer>> mapped;
  struct HostCall {
    const char* name;
    std::function<void()> call;
  };
  const HostCall calls[] = {
      {"nothing", {}},
      {"cudaMalloc of 1 MiB",
       [&] {
         void* block = nullptr;
         EXPECT_EQ(cudaMalloc(&block, 1 << 20), cudaSuccess);
         allocated.push_back(block);
       }},
      {"cudaFree of 1 MiB", [&] { to_free[0].pop_back(); }},
      {"cuMemCreate, cuMemMap and cuMemSetAccess of one granule (PyTorch's expandable segments "
       "grow)",
       [&] {
         absl::StatusOr<std::unique_ptr<MemoryKindBuffer>> buffer =
             MemoryKindBuffer::Allocate(MemoryKind::kMapped, /*device=*/0, 1 << 20);
         EXPECT_TRUE(buffer.ok()) << buffer.status();
         if (buffer.ok()) mapped.push_back(std::move(*buffer));
       }},
      {"cuMemUnmap and cuMemRelease of one granule (PyTorch's expandable segments shrink)",
       [&] { to_free[1].pop_back(); }},
      {"cudaMemset of 1 MiB", [&] { EXPECT_EQ(cudaMemset(scratch, 0, 1 << 20), cudaSuccess); }},
      {"cudaMemcpy of 4 KiB to the GPU",
       [&] {
         EXPECT_EQ(cudaMemcpy(scratch, host.data(), host.size(), cudaMemcpyHostToDevice),
                   cudaSuccess);
       }},
      {"cudaStreamCreate",
       [&] {
         cudaStream_t stream = nullptr;
         EXPECT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
         created.push_back(stream);
       }},
      {"cudaEventCreate",
       [&] {
         cudaEvent_t event = nullptr;
         EXPECT_EQ(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), cudaSuccess);
         events.push_back(event);
       }},
  };
  const int second = handoff.Stalls(/*rounds=*/1, /*idle=*/true, false, {}, /*setter_second=*/true);
  std::cout << "[ ltx      ] the setter second on its stream, behind another kernel: " << second
            << " of " << kPairs << " stalled" << std::endl;
  EXPECT_EQ(second, 0);
  for (const HostCall& host_call : calls) {
    const int stalls = handoff.Stalls(/*rounds=*/1, /*idle=*/true, false, host_call.call);
    std::cout << "[ ltx      ] " << host_call.name
              << " between a waiting kernel and the one it waits for: " << stalls << " of "
              << kPairs << " stalled" << std::endl;
    // Measured on H200: none of these calls stalls a hand-over.
    EXPECT_EQ(stalls, 0) << host_call.name;
  }
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  mapped.clear();
  for (void* block : allocated) cudaFree(block);
  for (cudaStream_t stream : created) cudaStreamDestroy(stream);
  for (cudaEvent_t event : events) cudaEventDestroy(event);
  cudaFree(scratch);
}

// Which of many streams share a hardware queue: for every pair (i, j), i < j, of 64 streams, a
// kernel on i waits for one on j with work queued behind it on i (a kernel, or an event record
// as a Runtime makes after each op); a stall means the pair shares a queue. Streams created one
// after another at one priority, and alternating between the device's lowest and highest
// priority (as PyTorch's stream pools are created): more streams than CUDA_DEVICE_MAX_CONNECTIONS,
// only two of them busy at a time.
TEST(StreamHandoffTest, ManyStreamsTwoBusyAtATimeShareNoQueue) {
  if (VisibleGpuCount() == 0) LTX_SKIP_GPU_TEST("needs a GPU, none is visible");
  constexpr int kMany = 64;
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  int least = 0;
  int greatest = 0;
  ASSERT_EQ(cudaDeviceGetStreamPriorityRange(&least, &greatest), cudaSuccess);
  void* memory = nullptr;
  ASSERT_EQ(cudaMalloc(&memory, sizeof(uint64_t) * 2), cudaSuccess);
  uint64_t* flags = static_cast<uint64_t*>(memory);
  ASSERT_EQ(cudaMemset(flags, 0, sizeof(uint64_t) * 2), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // Before the non-blocking streams use them.
  void* pinned = nullptr;
  ASSERT_EQ(cudaMallocHost(&pinned, sizeof(uint32_t)), cudaSuccess);
  volatile uint32_t* seen = static_cast<uint32_t*>(pinned);
  cudaEvent_t event = nullptr;
  ASSERT_EQ(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), cudaSuccess);
  uint64_t value = 0;
  for (bool alternate : {false, true}) {
    std::vector<cudaStream_t> streams(kMany);
    for (int i = 0; i < kMany; ++i) {
      const int priority = alternate && i % 2 == 1 ? greatest : least;
      ASSERT_EQ(cudaStreamCreateWithPriority(&streams[i], cudaStreamNonBlocking, priority),
                cudaSuccess);
    }
    for (bool event_behind : {false, true}) {
      std::vector<std::pair<int, int>> shared;
      for (int i = 0; i < kMany; ++i) {
        for (int j = i + 1; j < kMany; ++j) {
          ++value;
          *seen = 2;
          ASSERT_EQ(LaunchAwaitFlag(&flags[0], value, kDeadlineNs, const_cast<uint32_t*>(seen), streams[i]),
                    cudaSuccess);
          if (event_behind) {
            ASSERT_EQ(cudaEventRecord(event, streams[i]), cudaSuccess);
          } else {
            ASSERT_EQ(LaunchSetFlag(&flags[1], value, streams[i]), cudaSuccess);
          }
          ASSERT_EQ(LaunchSetFlag(&flags[0], value, streams[j]), cudaSuccess);
          ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
          if (*seen != 1) shared.emplace_back(i, j);
        }
      }
      std::cout << "[ ltx      ] " << kMany << " streams"
                << (alternate ? " alternating lowest and highest priority" : " of one priority")
                << ", " << (event_behind ? "an event record" : "a kernel")
                << " queued behind the waiting one: " << shared.size() << " of "
                << kMany * (kMany - 1) / 2 << " pairs share a queue";
      for (size_t k = 0; k < shared.size() && k < 40; ++k) {
        std::cout << (k == 0 ? ": " : " ") << shared[k].first << "~" << shared[k].second;
      }
      std::cout << std::endl;
      // Measured on H200 with 8 and with 32 connections: with two busy at a time, no pair
      // stalls. This does not cover many streams that carried work before (kernels/PROTOCOL.md,
      // "Ranks that share a GPU": a harness with 16 streams per rank did stall).
      EXPECT_TRUE(shared.empty());
    }
    for (cudaStream_t stream : streams) cudaStreamDestroy(stream);
  }
  cudaEventDestroy(event);
  cudaFreeHost(pinned);
  cudaFree(flags);
}

}  // namespace
}  // namespace ltx
