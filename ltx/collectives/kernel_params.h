// The parameters that the kernels of the peer-store transport take alike, whatever their
// collective: every rank's signal region, the rank's error record, its place in the world and
// the call's deadline; for the collectives' kernels also the rank's buffers (every tensor's),
// every rank's staging and the reset generation.
#ifndef LTX_COLLECTIVES_KERNEL_PARAMS_H_
#define LTX_COLLECTIVES_KERNEL_PARAMS_H_

#include <cstdint>

#include "absl/time/time.h"
#include "ltx/rank_buffers.h"
#include "ltx/runtime/resolved_call.h"
#include "ltx/transport/peer_store/peer_store_transport.h"

namespace ltx {

// Fills what the parameters of every kernel of the transport (AllGatherKernelParams,
// AllToAllKernelParams, CopyEngineGraphParams) take from rank `view.rank`'s view and the call:
// every rank's signal region, the rank's error record, its place in the world and the call's
// deadline. Thread-safe (pure).
template <typename KernelParams>
void SetViewParams(const PeerStoreView& view, const ResolvedCall& call, KernelParams* params) {
  for (int peer = 0; peer < view.world_size; ++peer) params->signals[peer] = view.signals[peer];
  params->error_record = view.error_record;
  params->rank = view.rank;
  params->world_size = view.world_size;
  params->timeout_ns = static_cast<uint64_t>(absl::ToInt64Nanoseconds(call.timeout));
}

// Fills the shared fields of `params` (AllGatherKernelParams, AllToAllKernelParams) for rank
// `view.rank`'s call of `tensors` tensors on `buffers`: SetViewParams's, the buffers (every
// tensor's), every rank's staging and the reset generation; the collective's own fields are
// left to the caller. Thread-safe (pure).
template <typename KernelParams>
void SetSharedKernelParams(const PeerStoreView& view, const RankBuffers& buffers,
                           const ResolvedCall& call, int tensors, KernelParams* params) {
  SetViewParams(view, call, params);
  params->input = buffers.input;
  params->output = buffers.output;
  params->tensors = tensors;
  for (int tensor = 1; tensor < tensors; ++tensor) {
    params->more_inputs[tensor - 1] = buffers.more_inputs[tensor - 1];
    params->more_outputs.address[tensor - 1] =
        reinterpret_cast<uint64_t>(buffers.more_outputs[tensor - 1]);
  }
  for (int peer = 0; peer < view.world_size; ++peer) params->staging[peer] = view.staging[peer];
  params->generation = call.generation;
}

}  // namespace ltx

#endif  // LTX_COLLECTIVES_KERNEL_PARAMS_H_
