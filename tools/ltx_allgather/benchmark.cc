// nccl-tests-style AllGather sweep of ltx with NCCL side by side.
#include "tools/benchmark.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "ltx/call_path.h"
#include "ltx/cuda_status.h"
#include "ltx/status_macros.h"
#include "tools/nccl_library.h"

namespace ltx {
namespace {

// Calls captured into one graph per GPU in the graph style.
constexpr int kCallsPerGraph = 20;
constexpr absl::Duration kWaitLimit = absl::Seconds(60);

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

tools::NcclType NcclTypeOf(DataType dtype) {
  switch (dtype) {
    case DataType::kBFloat16:
      return tools::NcclType::kBfloat16;
    case DataType::kFloat16:
      return tools::NcclType::kFloat16;
    case DataType::kFloat32:
      return tools::NcclType::kFloat32;
    case DataType::kFloat8E4M3:
      return tools::NcclType::kFloat8E4M3;
    case DataType::kFloat8E5M2:
      return tools::NcclType::kFloat8E5M2;
    case DataType::kInt8:
      return tools::NcclType::kInt8;
    case DataType::kUint8:
      break;
  }
  return tools::NcclType::kUint8;
}

// Timing events, one pair per GPU.
class EventPairs {
 public:
  static absl::StatusOr<EventPairs> Create(const std::vector<int>& devices) {
    EventPairs pairs;
    pairs.devices_ = devices;
    for (int device : devices) {
      LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(device), "cudaSetDevice"));
      cudaEvent_t start = nullptr;
      cudaEvent_t stop = nullptr;
      LTX_RETURN_IF_ERROR(CudaStatus(cudaEventCreate(&start), "cudaEventCreate"));
      LTX_RETURN_IF_ERROR(CudaStatus(cudaEventCreate(&stop), "cudaEventCreate"));
      pairs.start_.push_back(start);
      pairs.stop_.push_back(stop);
    }
    return pairs;
  }
  EventPairs() = default;
  EventPairs(EventPairs&&) = default;
  EventPairs& operator=(EventPairs&&) = default;
  ~EventPairs() {
    for (cudaEvent_t e : start_) cudaEventDestroy(e);
    for (cudaEvent_t e : stop_) cudaEventDestroy(e);
  }
  absl::Status RecordStart(int rank, cudaStream_t stream) {
    return CudaStatus(cudaEventRecord(start_[rank], stream), "cudaEventRecord");
  }
  absl::Status RecordStop(int rank, cudaStream_t stream) {
    return CudaStatus(cudaEventRecord(stop_[rank], stream), "cudaEventRecord");
  }
  // Longest start-to-stop time over the GPUs, in microseconds, after waiting for them.
  absl::StatusOr<double> SlowestMicroseconds() {
    double slowest = 0;
    for (size_t rank = 0; rank < stop_.size(); ++rank) {
      LTX_RETURN_IF_ERROR(CudaStatus(cudaEventSynchronize(stop_[rank]), "cudaEventSynchronize"));
      float ms = 0;
      LTX_RETURN_IF_ERROR(
          CudaStatus(cudaEventElapsedTime(&ms, start_[rank], stop_[rank]), "cudaEventElapsedTime"));
      slowest = std::max(slowest, 1000.0 * ms);
    }
    return slowest;
  }

 private:
  std::vector<int> devices_;
  std::vector<cudaEvent_t> start_;
  std::vector<cudaEvent_t> stop_;
};

// What one timed window runs on rank `rank`: `calls` collectives on `stream`.
using RankLoop = std::function<absl::Status(int rank, int calls)>;

struct WindowTimes {
  double device_us_per_call = 0;
  double host_us_per_call = 0;
};

// Runs `loop` on one host thread per rank (released together), between timing events.
absl::StatusOr<WindowTimes> TimeWindowPerRankThreads(const std::vector<int>& devices,
                                                     const std::vector<RankBuffers>& buffers,
                                                     EventPairs& events, const RankLoop& loop,
                                                     int calls) {
  const int world = static_cast<int>(devices.size());
  std::vector<absl::Status> results(world);
  std::vector<double> host_us(world, 0);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world; ++rank) {
    threads.emplace_back([&, rank] {
      cudaSetDevice(devices[rank]);
      ready.fetch_add(1);
      while (ready.load() < world) {
      }
      absl::Status status = events.RecordStart(rank, buffers[rank].stream);
      const absl::Time begin = absl::Now();
      if (status.ok()) status = loop(rank, calls);
      host_us[rank] = absl::ToDoubleMicroseconds(absl::Now() - begin) / calls;
      if (status.ok()) status = events.RecordStop(rank, buffers[rank].stream);
      results[rank] = status;
    });
  }
  for (auto& thread : threads) thread.join();
  for (const auto& result : results) LTX_RETURN_IF_ERROR(result);
  LTX_ASSIGN_OR_RETURN(const double slowest, events.SlowestMicroseconds());
  return WindowTimes{slowest / calls, Median(host_us)};
}

// Runs `loop` from the calling thread for all ranks at once (`loop(-1, calls)`).
absl::StatusOr<WindowTimes> TimeWindowOneThread(const std::vector<int>& devices,
                                                const std::vector<RankBuffers>& buffers,
                                                EventPairs& events, const RankLoop& loop,
                                                int calls) {
  for (size_t rank = 0; rank < devices.size(); ++rank) {
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(devices[rank]), "cudaSetDevice"));
    LTX_RETURN_IF_ERROR(events.RecordStart(rank, buffers[rank].stream));
  }
  const absl::Time begin = absl::Now();
  LTX_RETURN_IF_ERROR(loop(-1, calls));
  const double host_us = absl::ToDoubleMicroseconds(absl::Now() - begin) / calls;
  for (size_t rank = 0; rank < devices.size(); ++rank) {
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(devices[rank]), "cudaSetDevice"));
    LTX_RETURN_IF_ERROR(events.RecordStop(rank, buffers[rank].stream));
  }
  LTX_ASSIGN_OR_RETURN(const double slowest, events.SlowestMicroseconds());
  return WindowTimes{slowest / calls, host_us};
}

// Captures `capture(k)` for k calls on every stream into one graph per GPU, from this thread.
class GraphSet {
 public:
  ~GraphSet() {
    for (cudaGraphExec_t exec : execs_) cudaGraphExecDestroy(exec);
  }
  absl::Status Capture(const std::vector<int>& devices, const std::vector<RankBuffers>& buffers,
                       const std::function<absl::Status()>& one_call_all_ranks) {
    for (size_t rank = 0; rank < devices.size(); ++rank) {
      LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(devices[rank]), "cudaSetDevice"));
      LTX_RETURN_IF_ERROR(CudaStatus(
          cudaStreamBeginCapture(buffers[rank].stream, cudaStreamCaptureModeRelaxed),
          "cudaStreamBeginCapture"));
    }
    absl::Status captured;
    for (int k = 0; k < kCallsPerGraph && captured.ok(); ++k) captured = one_call_all_ranks();
    for (size_t rank = 0; rank < devices.size(); ++rank) {
      cudaSetDevice(devices[rank]);
      cudaGraph_t graph = nullptr;
      const absl::Status ended =
          CudaStatus(cudaStreamEndCapture(buffers[rank].stream, &graph), "cudaStreamEndCapture");
      if (captured.ok()) captured = ended;
      if (graph == nullptr) continue;
      cudaGraphExec_t exec = nullptr;
      const absl::Status made =
          CudaStatus(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
      if (captured.ok()) captured = made;
      cudaGraphDestroy(graph);
      if (exec != nullptr) execs_.push_back(exec);
    }
    return captured;
  }
  // Launches rank `rank`'s graph `launches` times.
  absl::Status Launch(int rank, int launches, cudaStream_t stream) {
    for (int i = 0; i < launches; ++i) {
      LTX_RETURN_IF_ERROR(CudaStatus(cudaGraphLaunch(execs_[rank], stream), "cudaGraphLaunch"));
    }
    return absl::OkStatus();
  }

 private:
  std::vector<cudaGraphExec_t> execs_;
};

struct Measured {
  double device_us = 0;
  double host_us = 0;
};

// Warm-up, then `windows` timed windows; medians.
absl::StatusOr<Measured> Measure(const BenchConfig& config, bool per_rank_threads,
                                 const std::vector<int>& devices,
                                 const std::vector<RankBuffers>& buffers, EventPairs& events,
                                 const RankLoop& loop, int calls_per_unit) {
  auto window = [&](int calls) {
    return per_rank_threads ? TimeWindowPerRankThreads(devices, buffers, events, loop, calls)
                            : TimeWindowOneThread(devices, buffers, events, loop, calls);
  };
  const int warm_units = std::max(1, config.warmup / calls_per_unit);
  const int timed_units = std::max(1, config.iterations / calls_per_unit);
  LTX_RETURN_IF_ERROR(window(warm_units).status());
  std::vector<double> device_us;
  std::vector<double> host_us;
  for (int w = 0; w < config.windows; ++w) {
    LTX_ASSIGN_OR_RETURN(const WindowTimes times, window(timed_units));
    device_us.push_back(times.device_us_per_call / calls_per_unit);
    host_us.push_back(times.host_us_per_call / calls_per_unit);
  }
  return Measured{Median(device_us), Median(host_us)};
}

std::string FormatBytes(int64_t bytes) {
  if (bytes >= (int64_t{1} << 30) && bytes % (int64_t{1} << 30) == 0) {
    return absl::StrFormat("%dG", bytes >> 30);
  }
  if (bytes >= (1 << 20) && bytes % (1 << 20) == 0) return absl::StrFormat("%dM", bytes >> 20);
  if (bytes >= (1 << 10) && bytes % (1 << 10) == 0) return absl::StrFormat("%dK", bytes >> 10);
  return absl::StrFormat("%d", bytes);
}

absl::Status WriteJson(const BenchConfig& config, const std::vector<int>& devices,
                       const std::string& nccl_version,
                       const std::vector<BenchRow>& rows) {
  std::ofstream out(config.json_path);
  if (!out) return absl::PermissionDeniedError("cannot write " + config.json_path);
  out << absl::StrFormat(
      "{\n  \"world_size\": %d,\n  \"devices\": [%s],\n  \"dtype\": \"%s\",\n  \"hidden\": "
      "%d,\n  \"style\": \"%s\",\n  \"nccl\": \"%s\",\n  \"rows\": [\n",
      devices.size(), absl::StrJoin(devices, ", "), DataTypeName(config.dtype), config.hidden,
      BenchStyleName(config.style), nccl_version);
  for (size_t i = 0; i < rows.size(); ++i) {
    const BenchRow& r = rows[i];
    out << absl::StrFormat(
        "    {\"size_bytes\": %d, \"per_rank_bytes\": %d, \"count\": %d, \"ltx_us\": %.3f, "
        "\"ltx_algbw_gbps\": %.3f, \"ltx_busbw_gbps\": %.3f, \"host_us\": %.3f, \"wrong\": %d, "
        "\"nccl_us\": %.3f, \"nccl_busbw_gbps\": %.3f}%s\n",
        r.size_bytes, r.per_rank_bytes, r.count, r.ltx_us, r.ltx_algbw, r.ltx_busbw, r.host_us,
        r.wrong, r.nccl_us, r.nccl_busbw, i + 1 < rows.size() ? "," : "");
  }
  out << "  ]\n}\n";
  return out ? absl::OkStatus() : absl::DataLossError("failed writing " + config.json_path);
}

}  // namespace

absl::StatusOr<BenchStyle> ParseBenchStyle(const std::string& name) {
  if (name == "rank") return BenchStyle::kPerRank;
  if (name == "coordinated") return BenchStyle::kCoordinated;
  if (name == "graph") return BenchStyle::kGraph;
  return absl::InvalidArgumentError(
      absl::StrFormat("--style=%s: expected rank, coordinated or graph", name));
}

std::string BenchStyleName(BenchStyle style) {
  switch (style) {
    case BenchStyle::kPerRank:
      return "rank";
    case BenchStyle::kCoordinated:
      return "coordinated";
    case BenchStyle::kGraph:
      return "graph";
  }
  return "unknown";
}

absl::StatusOr<Protocol> ParseProtocol(const std::string& name) {
  if (name == "auto") return Protocol::kAuto;
  if (name == "direct") return Protocol::kDirect;
  if (name == "one_trip") return Protocol::kOneTrip;
  if (name == "copy_engine") return Protocol::kCopyEngine;
  return absl::InvalidArgumentError(
      absl::StrFormat("--protocol=%s: expected auto, direct, one_trip or copy_engine", name));
}

std::string ProtocolName(Protocol protocol) {
  switch (protocol) {
    case Protocol::kAuto:
      return "auto";
    case Protocol::kDirect:
      return "direct";
    case Protocol::kOneTrip:
      return "one_trip";
    case Protocol::kCopyEngine:
      return "copy_engine";
  }
  return "unknown";
}

absl::StatusOr<Transport> ParseTransport(const std::string& name) {
  if (name == "auto") return Transport::kAuto;
  if (name == "peer_stores") return Transport::kPeerStores;
  if (name == "copy_engine") return Transport::kCopyEngine;
  return absl::InvalidArgumentError(
      absl::StrFormat("--transport=%s: expected auto, peer_stores or copy_engine", name));
}

std::string TransportName(Transport transport) {
  switch (transport) {
    case Transport::kAuto:
      return "auto";
    case Transport::kPeerStores:
      return "peer_stores";
    case Transport::kCopyEngine:
      return "copy_engine";
  }
  return "unknown";
}

absl::StatusOr<SplitPattern> ParseSplitPattern(const std::string& name) {
  if (name == "even") return SplitPattern::kEven;
  if (name == "uneven") return SplitPattern::kUneven;
  if (name == "zeros") return SplitPattern::kZeros;
  return absl::InvalidArgumentError(
      absl::StrFormat("--split=%s: expected even, uneven or zeros", name));
}

std::vector<int64_t> SplitTokens(int64_t total_tokens, int world, SplitPattern pattern) {
  std::vector<int64_t> weights(world, 1);
  for (int rank = 0; rank < world; ++rank) {
    if (pattern == SplitPattern::kUneven) weights[rank] = rank + 1;
    if (pattern == SplitPattern::kZeros) weights[rank] = (rank % 2 == 0 || world == 1) ? 1 : 0;
  }
  int64_t weight_sum = 0;
  for (int64_t w : weights) weight_sum += w;
  std::vector<int64_t> counts(world, 0);
  int64_t assigned = 0;
  for (int rank = 0; rank < world; ++rank) {
    counts[rank] = total_tokens * weights[rank] / weight_sum;
    assigned += counts[rank];
  }
  // The remainder goes to the last rank with a non-zero weight.
  for (int rank = world - 1; rank >= 0; --rank) {
    if (weights[rank] > 0) {
      counts[rank] += total_tokens - assigned;
      break;
    }
  }
  return counts;
}

absl::StatusOr<std::vector<BenchRow>> RunBenchmark(const BenchConfig& config) {
  if (config.min_bytes < 1 || config.max_bytes < config.min_bytes || config.factor <= 1) {
    return absl::InvalidArgumentError("need 1 <= -b <= -e and -f > 1");
  }
  RuntimeOptions options;
  options.devices = config.devices;
  options.max_blocks = config.max_blocks;
  options.one_trip_max_bytes = config.one_trip_max_bytes;
  options.copy_engine_min_bytes = config.copy_engine_min_bytes;
  options.transport = config.transport;
  LTX_ASSIGN_OR_RETURN(std::unique_ptr<Runtime> runtime, Runtime::Create(options));
  const std::vector<int> devices = runtime->devices();
  const int world = runtime->world_size();
  const int64_t row_bytes = config.hidden * ElementSize(config.dtype);
  if (row_bytes < 1) return absl::InvalidArgumentError("--hidden must be >= 1");
  const int64_t max_tokens = std::max<int64_t>(world, config.max_bytes / row_bytes);
  const int64_t output_capacity = max_tokens * row_bytes;
  LTX_ASSIGN_OR_RETURN(std::unique_ptr<AllGatherHarness> harness,
                       AllGatherHarness::Create(devices, output_capacity, output_capacity, 42));
  LTX_ASSIGN_OR_RETURN(EventPairs events, EventPairs::Create(devices));

  std::unique_ptr<tools::NcclLibrary> nccl;
  std::unique_ptr<tools::NcclClique> clique;
  std::string nccl_version = "none";
  if (!config.nccl_path.empty()) {
    auto loaded = tools::NcclLibrary::Load(config.nccl_path);
    if (loaded.ok()) {
      nccl = std::move(*loaded);
      auto made = tools::NcclClique::Create(*nccl, devices);
      if (made.ok()) {
        clique = std::move(*made);
        nccl_version = nccl->Version();
      } else {
        absl::PrintF("# NCCL %s loaded but ncclCommInitAll failed: %s; ltx columns only\n",
                    nccl->Version().c_str(), made.status().ToString().c_str());
      }
    } else {
      absl::PrintF("# NCCL not available (%s); ltx columns only\n",
                  loaded.status().ToString().c_str());
    }
  }
  absl::PrintF("# ltx all_gather benchmark: %d GPUs [%s], transport %s, dtype %s, hidden %d, "
              "split %s, style %s, protocol %s (one-trip up to %d bytes per rank, eager calls "
              "by copy engines from %s)\n",
              world, absl::StrJoin(devices, ",").c_str(),
              TransportName(runtime->transport()).c_str(), DataTypeName(config.dtype).c_str(),
              config.hidden, config.split == SplitPattern::kEven     ? "even"
                             : config.split == SplitPattern::kUneven ? "uneven"
                                                                     : "zeros",
              BenchStyleName(config.style).c_str(), ProtocolName(config.protocol).c_str(),
              OneTripLimit(config.one_trip_max_bytes, world),
              config.copy_engine_min_bytes > 0
                  ? absl::StrCat(config.copy_engine_min_bytes, " bytes per rank")
                  : std::string("no size"));
  absl::PrintF("# time = median over %d windows of %d calls (after %d warm-up calls) of device "
              "time per call, slowest GPU; host = launch cost per call on the host\n",
              config.windows, config.iterations, config.warmup);
  if (clique != nullptr) {
    absl::PrintF("# NCCL %s: grouped ncclAllGather on the same buffers and streams, %s%s\n",
                nccl_version.c_str(), config.style == BenchStyle::kGraph ? "graph replay" : "eager",
                config.split == SplitPattern::kEven ? "" : " (even split of the same total)");
  }
  absl::PrintF("#\n# %10s %10s %12s %9s %6s %5s | %9s %8s %8s %6s %7s | %9s %8s | %7s\n", "size",
              "per-rank", "count", "type", "redop", "root", "ltx(us)", "algbw", "busbw", "#wrong",
              "host", "nccl(us)", "busbw", "speedup");
  std::fflush(stdout);

  std::vector<BenchRow> rows;
  for (double size = config.min_bytes; size <= config.max_bytes * 1.0000001; size *= config.factor) {
    const int64_t total_tokens = std::max<int64_t>(1, static_cast<int64_t>(size) / row_bytes);
    AllGatherCase c;
    c.dtype = config.dtype;
    c.hidden = config.hidden;
    c.token_counts = SplitTokens(total_tokens, world, config.split);
    LTX_RETURN_IF_ERROR(harness->Prepare(c));
    const AllGatherLayout& layout = harness->layout();
    const std::vector<RankBuffers> buffers = harness->AllBuffers();
    const AllGatherShape shape = c.Shape();
    CallOptions call;
    call.blocks = config.blocks;
    call.protocol = config.protocol;
    BenchRow row;
    row.size_bytes = layout.output_bytes;
    for (int rank = 0; rank < world; ++rank) {
      row.per_rank_bytes = std::max(row.per_rank_bytes, layout.InputBytes(rank));
    }
    row.count = layout.output_bytes / ElementSize(config.dtype);
    std::fprintf(stderr, "ltx_allgather: %s ...\n", FormatBytes(row.size_bytes).c_str());

    auto ltx_all_ranks = [&]() -> absl::Status {
      for (int rank = 0; rank < world; ++rank) {
        LTX_RETURN_IF_ERROR(runtime->AllGatherRank(rank, shape, buffers[rank], call));
      }
      return absl::OkStatus();
    };
    if (config.check) {
      LTX_RETURN_IF_ERROR(runtime->AllGatherAndWait(shape, buffers, kWaitLimit, call));
      if (!harness->Verify().ok()) row.wrong = 1;
    }
    Measured ltx;
    if (config.style == BenchStyle::kGraph) {
      if (runtime->transport() == Transport::kCopyEngine) {
        return absl::UnimplementedError(
            "--style=graph: the copy-engine transport cannot be captured into CUDA graphs");
      }
      GraphSet graphs;
      LTX_RETURN_IF_ERROR(graphs.Capture(devices, buffers, ltx_all_ranks));
      LTX_ASSIGN_OR_RETURN(
          ltx, Measure(config, /*per_rank_threads=*/true, devices, buffers, events,
                       [&](int rank, int units) { return graphs.Launch(rank, units, buffers[rank].stream); },
                       kCallsPerGraph));
    } else if (config.style == BenchStyle::kPerRank) {
      LTX_ASSIGN_OR_RETURN(
          ltx, Measure(config, /*per_rank_threads=*/true, devices, buffers, events,
                       [&](int rank, int calls) -> absl::Status {
                         for (int i = 0; i < calls; ++i) {
                           LTX_RETURN_IF_ERROR(
                               runtime->AllGatherRank(rank, shape, buffers[rank], call));
                         }
                         return absl::OkStatus();
                       },
                       1));
    } else {
      LTX_ASSIGN_OR_RETURN(
          ltx, Measure(config, /*per_rank_threads=*/false, devices, buffers, events,
                       [&](int, int calls) -> absl::Status {
                         for (int i = 0; i < calls; ++i) {
                           LTX_RETURN_IF_ERROR(runtime->AllGather(shape, buffers, call).status());
                         }
                         return absl::OkStatus();
                       },
                       1));
    }
    LTX_RETURN_IF_ERROR(runtime->Synchronize(kWaitLimit));
    if (config.check && !harness->Verify().ok()) row.wrong = 1;
    row.ltx_us = ltx.device_us;
    row.host_us = ltx.host_us;
    row.ltx_algbw = row.size_bytes / (row.ltx_us * 1e3);
    row.ltx_busbw = row.ltx_algbw * (world - 1) / world;

    if (clique != nullptr) {
      AllGatherCase even = c;
      even.token_counts = SplitTokens(total_tokens - total_tokens % world, world,
                                      SplitPattern::kEven);
      if (even.token_counts[0] > 0) {
        LTX_RETURN_IF_ERROR(harness->Prepare(even));
        const std::vector<RankBuffers> nccl_buffers = harness->AllBuffers();
        std::vector<const void*> inputs;
        std::vector<void*> outputs;
        std::vector<cudaStream_t> streams;
        for (const RankBuffers& b : nccl_buffers) {
          inputs.push_back(b.input);
          outputs.push_back(b.output);
          streams.push_back(b.stream);
        }
        const size_t count = harness->layout().InputBytes(0) / ElementSize(config.dtype);
        auto nccl_call = [&]() -> absl::Status {
          return clique->AllGather(inputs, outputs, count, NcclTypeOf(config.dtype), streams);
        };
        Measured measured;
        if (config.style == BenchStyle::kGraph) {
          GraphSet graphs;
          LTX_RETURN_IF_ERROR(graphs.Capture(devices, nccl_buffers, nccl_call));
          LTX_ASSIGN_OR_RETURN(
              measured,
              Measure(config, /*per_rank_threads=*/true, devices, nccl_buffers, events,
                      [&](int rank, int units) {
                        return graphs.Launch(rank, units, nccl_buffers[rank].stream);
                      },
                      kCallsPerGraph));
        } else {
          LTX_ASSIGN_OR_RETURN(
              measured, Measure(config, /*per_rank_threads=*/false, devices, nccl_buffers,
                                events,
                                [&](int, int calls) -> absl::Status {
                                  for (int i = 0; i < calls; ++i) LTX_RETURN_IF_ERROR(nccl_call());
                                  return absl::OkStatus();
                                },
                                1));
        }
        LTX_RETURN_IF_ERROR(harness->SynchronizeStreams());
        if (config.check && !harness->Verify().ok()) {
          absl::PrintF("# NCCL output differs from the expected bytes at size %s\n",
                      FormatBytes(row.size_bytes).c_str());
        }
        const int64_t nccl_bytes = harness->layout().output_bytes;
        row.nccl_us = measured.device_us;
        row.nccl_busbw = nccl_bytes / (row.nccl_us * 1e3) * (world - 1) / world;
      }
    }
    absl::PrintF("  %10s %10s %12d %9s %6s %5d | %9.2f %8.2f %8.2f %6d %7.2f | ",
                FormatBytes(row.size_bytes).c_str(), FormatBytes(row.per_rank_bytes).c_str(),
                row.count, DataTypeName(config.dtype).c_str(), "none", -1, row.ltx_us,
                row.ltx_algbw, row.ltx_busbw, row.wrong, row.host_us);
    if (row.nccl_us > 0) {
      absl::PrintF("%9.2f %8.2f | %6.2fx\n", row.nccl_us, row.nccl_busbw, row.nccl_us / row.ltx_us);
    } else {
      absl::PrintF("%9s %8s | %7s\n", "-", "-", "-");
    }
    std::fflush(stdout);
    rows.push_back(row);
  }
  if (!config.json_path.empty()) {
    LTX_RETURN_IF_ERROR(WriteJson(config, devices, nccl_version, rows));
  }
  return rows;
}

}  // namespace ltx
