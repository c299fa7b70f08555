// Per-rank calls captured into CUDA graphs and split at one kernel.
#include "tools/testing/split_rank_calls.h"

#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ltx/cuda/cuda_status.h"
#include "ltx/status_macros.h"
#include "tools/testing/rank_graphs.h"

namespace ltx {
namespace {

// The one kernel node of `graph` whose function's name contains `kernel_name`.
absl::Status FindKernel(cudaGraph_t graph, const std::string& kernel_name, cudaGraphNode_t* found,
                        cudaKernelNodeParams* params) {
  size_t count = 0;
  LTX_RETURN_IF_ERROR(CudaStatus(cudaGraphGetNodes(graph, nullptr, &count), "cudaGraphGetNodes"));
  std::vector<cudaGraphNode_t> nodes(count);
  LTX_RETURN_IF_ERROR(
      CudaStatus(cudaGraphGetNodes(graph, nodes.data(), &count), "cudaGraphGetNodes"));
  std::vector<std::string> kernels;
  *found = nullptr;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type;
    LTX_RETURN_IF_ERROR(CudaStatus(cudaGraphNodeGetType(node, &type), "cudaGraphNodeGetType"));
    if (type != cudaGraphNodeTypeKernel) continue;
    cudaKernelNodeParams node_params = {};
    LTX_RETURN_IF_ERROR(CudaStatus(cudaGraphKernelNodeGetParams(node, &node_params),
                                   "cudaGraphKernelNodeGetParams"));
    const char* name = nullptr;
    LTX_RETURN_IF_ERROR(
        CudaStatus(cudaFuncGetName(&name, node_params.func), "cudaFuncGetName"));
    kernels.push_back(name);
    if (std::strstr(name, kernel_name.c_str()) == nullptr) continue;
    if (*found != nullptr) {
      return absl::NotFoundError(absl::StrCat("several kernels' names contain ", kernel_name));
    }
    *found = node;
    *params = node_params;
  }
  if (*found == nullptr) {
    std::string names;
    for (const std::string& name : kernels) absl::StrAppend(&names, " ", name);
    return absl::NotFoundError(
        absl::StrCat("no kernel's name contains ", kernel_name, "; the graph's:", names));
  }
  size_t dependents = 0;
  LTX_RETURN_IF_ERROR(
      CudaStatus(cudaGraphNodeGetDependentNodes(*found, nullptr, nullptr, &dependents),
                 "cudaGraphNodeGetDependentNodes"));
  if (dependents != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(dependents, " node(s) depend on the kernel ", kernel_name));
  }
  return absl::OkStatus();
}

}  // namespace

SplitRankCalls::~SplitRankCalls() {
  for (Rank& rank : ranks_) {
    if (rank.before != nullptr) cudaGraphExecDestroy(rank.before);
    if (rank.graph != nullptr) cudaGraphDestroy(rank.graph);
  }
}

absl::Status SplitRankCalls::Capture(const std::vector<int>& devices,
                                     const std::vector<RankBuffers>& buffers,
                                     const std::string& kernel_name,
                                     const std::function<absl::Status(int rank)>& call_rank) {
  ranks_.assign(devices.size(), Rank{});
  return CaptureRankGraphs(devices, buffers, call_rank, [&](int r, cudaGraph_t graph) {
    Rank& rank = ranks_[r];
    rank.device = devices[r];
    rank.stream = buffers[r].stream;
    rank.graph = graph;
    cudaGraphNode_t kernel = nullptr;
    LTX_RETURN_IF_ERROR(FindKernel(rank.graph, kernel_name, &kernel, &rank.kernel));
    cudaGraph_t rest = nullptr;
    LTX_RETURN_IF_ERROR(CudaStatus(cudaGraphClone(&rest, rank.graph), "cudaGraphClone"));
    cudaGraphNode_t cloned = nullptr;
    absl::Status status = CudaStatus(cudaGraphNodeFindInClone(&cloned, kernel, rest),
                                     "cudaGraphNodeFindInClone");
    if (status.ok()) status = CudaStatus(cudaGraphDestroyNode(cloned), "cudaGraphDestroyNode");
    if (status.ok()) {
      status = CudaStatus(cudaGraphInstantiate(&rank.before, rest, 0), "cudaGraphInstantiate");
    }
    cudaGraphDestroy(rest);
    return status;
  });
}

absl::Status SplitRankCalls::LaunchBefore() {
  for (const Rank& rank : ranks_) {
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(rank.device), "cudaSetDevice"));
    LTX_RETURN_IF_ERROR(CudaStatus(cudaGraphLaunch(rank.before, rank.stream), "cudaGraphLaunch"));
  }
  return absl::OkStatus();
}

absl::Status SplitRankCalls::LaunchKernel() {
  for (const Rank& rank : ranks_) {
    const cudaKernelNodeParams& k = rank.kernel;
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(rank.device), "cudaSetDevice"));
    LTX_RETURN_IF_ERROR(CudaStatus(cudaLaunchKernel(k.func, k.gridDim, k.blockDim,
                                                    k.kernelParams, k.sharedMemBytes,
                                                    rank.stream),
                                   "cudaLaunchKernel"));
  }
  return absl::OkStatus();
}

}  // namespace ltx
