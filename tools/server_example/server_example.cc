// The server-loop example: per-GPU threads replaying compute -> AllGather -> compute graphs.
#include "tools/server_example/server_example.h"

#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <thread>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "ltx/cuda/cuda_status.h"
#include "ltx/runtime.h"
#include "ltx/status_macros.h"
#include "tools/server_example/server_example_kernels.h"

namespace ltx {
namespace {

// One GPU's part of the server: its buffers, its graph, and the loop its thread runs.
class GpuServer {
 public:
  GpuServer(Runtime* runtime, int rank, const AllGatherShape& shape)
      : runtime_(runtime), rank_(rank), shape_(shape) {}

  ~GpuServer() {
    if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
    cudaFree(input_);
    cudaFree(output_);
    cudaFree(step_);
    cudaFree(sum_);
    cudaFreeHost(host_);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  // Runs on this GPU's own thread: allocates and captures. Every rank sets up before any rank
  // serves: an allocation may wait for its whole GPU, where ranks that share it would already
  // be waiting for this one inside a collective.
  absl::Status SetUp() {
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(runtime_->devices()[rank_]), "cudaSetDevice"));
    LTX_RETURN_IF_ERROR(Allocate());
    return Capture();
  }

  // Runs on this GPU's own thread after SetUp: replays the graph `steps` times; *elapsed is the
  // time of the steps themselves (the host's checksum of each is left out). A step that fails
  // stops the Runtime, so that the other ranks' next steps end at once with this error.
  absl::Status Serve(int steps, absl::Duration* elapsed) {
    const absl::Status served = ServeSteps(steps, elapsed);
    if (!served.ok()) return runtime_->Stop(served);
    return served;
  }

 private:
  absl::Status ServeSteps(int steps, absl::Duration* elapsed) {
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(runtime_->devices()[rank_]), "cudaSetDevice"));
    *elapsed = absl::ZeroDuration();
    for (uint64_t step = 1; step <= static_cast<uint64_t>(steps); ++step) {
      const absl::Time start = absl::Now();
      host_->step = step;
      LTX_RETURN_IF_ERROR(CudaStatus(
          cudaMemcpyAsync(step_, &host_->step, sizeof(uint64_t), cudaMemcpyHostToDevice, stream_),
          "cudaMemcpyAsync(step)"));
      LTX_RETURN_IF_ERROR(CudaStatus(cudaGraphLaunch(exec_, stream_), "cudaGraphLaunch"));
      LTX_RETURN_IF_ERROR(CudaStatus(
          cudaMemcpyAsync(&host_->sum, sum_, sizeof(host_->sum), cudaMemcpyDeviceToHost, stream_),
          "cudaMemcpyAsync(sum)"));
      LTX_RETURN_IF_ERROR(CudaStatus(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"));
      *elapsed += absl::Now() - start;
      // A collective that failed on the device (a timeout, a mismatch) left its output
      // incomplete: its error, not the checksum, says what happened.
      LTX_RETURN_IF_ERROR(runtime_->status());
      const unsigned long long want = ExpectedSum(step);
      if (host_->sum != want) {
        return absl::DataLossError(absl::StrFormat(
            "rank %d, step %d: checksum of the gathered sequence is %d, expected %d", rank_, step,
            host_->sum, want));
      }
    }
    return absl::OkStatus();
  }

  struct HostState {
    uint64_t step;
    unsigned long long sum;
  };

  int64_t Elements(int rank) const { return shape_.token_counts[rank] * shape_.hidden; }
  int64_t TotalElements() const {
    int64_t total = 0;
    for (size_t r = 0; r < shape_.token_counts.size(); ++r) total += Elements(r);
    return total;
  }

  // The checksum of the gathered sequence: rank 0's elements, then rank 1's, and so on.
  unsigned long long ExpectedSum(uint64_t step) const {
    unsigned long long sum = 0;
    int64_t index = 0;
    for (size_t r = 0; r < shape_.token_counts.size(); ++r) {
      for (int64_t i = 0; i < Elements(r); ++i, ++index) {
        sum += ChecksumTerm(index, ExampleActivation(r, step, i));
      }
    }
    return sum;
  }

  absl::Status Allocate() {
    LTX_RETURN_IF_ERROR(
        CudaStatus(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate"));
    LTX_RETURN_IF_ERROR(CudaStatus(
        cudaMalloc(reinterpret_cast<void**>(&input_), Elements(rank_) * sizeof(uint16_t) + 16),
        "cudaMalloc(input)"));
    LTX_RETURN_IF_ERROR(CudaStatus(
        cudaMalloc(reinterpret_cast<void**>(&output_), TotalElements() * sizeof(uint16_t)),
        "cudaMalloc(output)"));
    LTX_RETURN_IF_ERROR(
        CudaStatus(cudaMalloc(reinterpret_cast<void**>(&step_), sizeof(uint64_t)), "cudaMalloc"));
    LTX_RETURN_IF_ERROR(CudaStatus(
        cudaMalloc(reinterpret_cast<void**>(&sum_), sizeof(unsigned long long)), "cudaMalloc"));
    return CudaStatus(cudaMallocHost(reinterpret_cast<void**>(&host_), sizeof(HostState)),
                      "cudaMallocHost");
  }

  // compute -> AllGather -> compute, captured on this GPU's stream by this thread.
  absl::Status Capture() {
    LTX_RETURN_IF_ERROR(CudaStatus(
        cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), "BeginCapture"));
    absl::Status captured = CudaStatus(
        LaunchFillActivations(input_, Elements(rank_), rank_, step_, stream_), "fill kernel");
    if (captured.ok()) {
      captured = runtime_->AllGatherRank(rank_, shape_, {input_, output_, stream_});
    }
    if (captured.ok()) {
      captured = CudaStatus(cudaMemsetAsync(sum_, 0, sizeof(unsigned long long), stream_),
                            "cudaMemsetAsync(sum)");
    }
    if (captured.ok()) {
      captured =
          CudaStatus(LaunchChecksum(output_, TotalElements(), sum_, stream_), "checksum kernel");
    }
    cudaGraph_t graph = nullptr;
    const absl::Status ended = CudaStatus(cudaStreamEndCapture(stream_, &graph), "EndCapture");
    if (captured.ok()) captured = ended;
    if (captured.ok()) {
      captured = CudaStatus(cudaGraphInstantiate(&exec_, graph, 0), "cudaGraphInstantiate");
    }
    if (graph != nullptr) cudaGraphDestroy(graph);
    return captured;
  }

  Runtime* const runtime_;
  const int rank_;
  const AllGatherShape shape_;
  cudaStream_t stream_ = nullptr;
  uint16_t* input_ = nullptr;
  uint16_t* output_ = nullptr;
  uint64_t* step_ = nullptr;
  unsigned long long* sum_ = nullptr;
  HostState* host_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

// Runs `part(rank)` on one thread per rank, all at once; the first error, if any.
absl::Status OnEveryRank(int world, const std::function<absl::Status(int)>& part) {
  std::vector<absl::Status> results(world);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world; ++rank) {
    threads.emplace_back([&, rank] { results[rank] = part(rank); });
  }
  for (auto& thread : threads) thread.join();
  for (const absl::Status& result : results) LTX_RETURN_IF_ERROR(result);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ServerExampleReport> RunServerExample(const ServerExampleOptions& options) {
  RuntimeOptions runtime_options;
  runtime_options.devices = options.devices;
  LTX_ASSIGN_OR_RETURN(std::unique_ptr<Runtime> runtime, Runtime::Create(runtime_options));
  const int world = runtime->world_size();
  std::vector<int64_t> counts;
  for (int rank = 0; rank < world; ++rank) counts.push_back(options.tokens_per_rank + 16 * rank);
  AllGatherShape shape;
  shape.dtype = DataType::kBFloat16;
  shape.hidden = options.hidden;
  shape.token_counts = counts;

  std::vector<std::unique_ptr<GpuServer>> servers;
  for (int rank = 0; rank < world; ++rank) {
    servers.push_back(std::make_unique<GpuServer>(runtime.get(), rank, shape));
  }
  LTX_RETURN_IF_ERROR(OnEveryRank(world, [&](int rank) { return servers[rank]->SetUp(); }));
  std::vector<absl::Duration> elapsed(world);
  const absl::Status served = OnEveryRank(
      world, [&](int rank) { return servers[rank]->Serve(options.steps, &elapsed[rank]); });
  // The error that stopped the Runtime first (a step that failed stops it), else the first
  // rank's.
  LTX_RETURN_IF_ERROR(runtime->status());
  LTX_RETURN_IF_ERROR(served);
  ServerExampleReport report;
  report.world_size = world;
  report.steps = options.steps;
  for (const absl::Duration& d : elapsed) report.elapsed = std::max(report.elapsed, d);
  return report;
}

}  // namespace ltx
