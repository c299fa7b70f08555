// Capturing a copy-engine call: the exchange of output addresses, the entry kernel, the
// conditional body of memcpy nodes, the exit kernel.
#include "ltx/transport/copy_engine/copy_engine_graph.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/str_format.h"
#include "kernels/copy_engine/copy_engine_graph_kernel.h"
#include "kernels/wire/entry_announcement.h"
#include "ltx/collectives/kernel_params.h"
#include "ltx/cuda/cuda_status.h"
#include "ltx/status_macros.h"
#include "ltx/transport/copy_engine/strided_copy.h"

namespace ltx {
namespace {

CopyEngineGraphParams ParamsOf(const PeerStoreView& view, const CopyEngineCall& copies,
                               const ResolvedCall& call) {
  CopyEngineGraphParams params;
  SetViewParams(view, call, &params);
  params.announcement = copies.announcement;
  params.collective = copies.collective;
  return params;
}

// This rank's copy into every rank's output (index: target), as exchanged in `params`.
std::vector<StridedCopy> PlanCopies(const CopyEngineGraphParams& params,
                                    const CopyEngineCall& copies, const RankBuffers& buffers) {
  std::vector<StridedCopy> planned;
  for (int target = 0; target < params.world_size; ++target) {
    planned.push_back(copies.plan(params.rank, target, buffers.input,
                                  reinterpret_cast<void*>(params.outputs[target])));
  }
  return planned;
}

// The graph `stream` is capturing.
absl::StatusOr<cudaGraph_t> CapturingGraph(cudaStream_t stream) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  cudaGraph_t graph = nullptr;
  LTX_RETURN_IF_ERROR(CudaStatus(
      cudaStreamGetCaptureInfo(stream, &capture, nullptr, &graph, nullptr, nullptr, nullptr),
      "cudaStreamGetCaptureInfo"));
  if (capture != cudaStreamCaptureStatusActive || graph == nullptr) {
    return absl::FailedPreconditionError("the stream's capture is no longer active");
  }
  return graph;
}

// Adds an IF node on `handle` after the capture's current work on `stream`, makes it the
// capture's only dependency (what the stream records next follows it), and returns its body.
absl::StatusOr<cudaGraph_t> AddConditionalBody(cudaStream_t stream,
                                               cudaGraphConditionalHandle handle) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  cudaGraph_t graph = nullptr;
  const cudaGraphNode_t* dependencies = nullptr;
  const cudaGraphEdgeData* edges = nullptr;
  size_t count = 0;
  LTX_RETURN_IF_ERROR(CudaStatus(
      cudaStreamGetCaptureInfo(stream, &capture, nullptr, &graph, &dependencies, &edges, &count),
      "cudaStreamGetCaptureInfo"));
  cudaGraphNodeParams params = {};
  params.type = cudaGraphNodeTypeConditional;
  params.conditional.handle = handle;
  params.conditional.type = cudaGraphCondTypeIf;
  params.conditional.size = 1;
  cudaGraphNode_t node = nullptr;
  LTX_RETURN_IF_ERROR(
      CudaStatus(cudaGraphAddNode(&node, graph, dependencies, edges, count, &params),
                 "cudaGraphAddNode(conditional)"));
  LTX_RETURN_IF_ERROR(CudaStatus(cudaStreamUpdateCaptureDependencies(
                                     stream, &node, nullptr, 1, cudaStreamSetCaptureDependencies),
                                 "cudaStreamUpdateCaptureDependencies"));
  return params.conditional.phGraph_out[0];
}

// Adds the body: `planned`, this rank's copy into every rank's output.
absl::Status AddCopies(int rank, int64_t max_pitch, const std::vector<StridedCopy>& planned,
                       cudaGraph_t body) {
  for (size_t target = 0; target < planned.size(); ++target) {
    LTX_RETURN_IF_ERROR(CudaStatus(
        AddStridedCopyNodes(planned[target], max_pitch, body),
        absl::StrFormat("rank %d: copy node into rank %d's output", rank, target)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CaptureCopyEngineCall(const PeerStoreView& view, int64_t max_pitch,
                                   const CopyEngineCall& copies, const RankBuffers& buffers,
                                   const ResolvedCall& call, CaptureExchange* exchange) {
  CopyEngineGraphParams params = ParamsOf(view, copies, call);
  LTX_ASSIGN_OR_RETURN(const std::vector<uint64_t> outputs,
                       exchange->Exchange(view.rank, params.announcement, call.timeout));
  std::copy(outputs.begin(), outputs.end(), params.outputs);
  const std::vector<StridedCopy> planned = PlanCopies(params, copies, buffers);
  params.has_body = std::all_of(planned.begin(), planned.end(), MovesNothing) ? 0 : 1;
  if (params.has_body != 0) {
    LTX_ASSIGN_OR_RETURN(const cudaGraph_t graph, CapturingGraph(buffers.stream));
    LTX_RETURN_IF_ERROR(
        CudaStatus(cudaGraphConditionalHandleCreate(&params.body, graph, /*defaultLaunchValue=*/0,
                                                    cudaGraphCondAssignDefault),
                   "cudaGraphConditionalHandleCreate"));
  }
  LTX_RETURN_IF_ERROR(
      CudaStatus(LaunchCopyEngineGraphEntry(params, buffers.stream), "entry kernel launch"));
  if (params.has_body != 0) {
    LTX_ASSIGN_OR_RETURN(const cudaGraph_t body, AddConditionalBody(buffers.stream, params.body));
    LTX_RETURN_IF_ERROR(AddCopies(view.rank, max_pitch, planned, body));
  }
  return CudaStatus(LaunchCopyEngineGraphExit(params, buffers.stream), "exit kernel launch");
}

}  // namespace ltx
