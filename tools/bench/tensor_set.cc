// Joining the buffers of several tensors into one call's.
#include "tools/bench/tensor_set.h"

namespace ltx {

std::vector<RankBuffers> JoinTensors(const std::vector<std::vector<RankBuffers>>& tensors) {
  std::vector<RankBuffers> joined = tensors.front();
  for (size_t rank = 0; rank < joined.size(); ++rank) {
    for (size_t tensor = 1; tensor < tensors.size(); ++tensor) {
      joined[rank].more_inputs[tensor - 1] = tensors[tensor][rank].input;
      joined[rank].more_outputs[tensor - 1] = tensors[tensor][rank].output;
    }
  }
  return joined;
}

}  // namespace ltx
