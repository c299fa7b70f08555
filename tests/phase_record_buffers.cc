// Phase-record buffers of the timed kernels on every rank's GPU, and their check.
#include "tests/phase_record_buffers.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <utility>

#include "gtest/gtest.h"
#include "ltx/cuda/cuda_status.h"
#include "ltx/status_macros.h"
#include "tools/testing/test_ranks.h"

namespace ltx {

PhaseRecordBuffers::PhaseRecordBuffers(std::vector<int> devices, int ops, int blocks)
    : devices_(std::move(devices)),
      ops_(ops),
      blocks_(blocks),
      timestamps_(devices_.size(), PhaseTimestamps{nullptr, ops, blocks}) {}

absl::StatusOr<std::unique_ptr<PhaseRecordBuffers>> PhaseRecordBuffers::Create(
    const std::vector<int>& devices, int ops, int blocks) {
  std::unique_ptr<PhaseRecordBuffers> buffers(new PhaseRecordBuffers(devices, ops, blocks));
  for (size_t rank = 0; rank < devices.size(); ++rank) {
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(devices[rank]), "cudaSetDevice"));
    LTX_RETURN_IF_ERROR(CudaStatus(
        cudaMalloc(reinterpret_cast<void**>(&buffers->timestamps_[rank].records),
                   sizeof(PhaseTimestampRecord) * ops * blocks),
        "cudaMalloc(phase records)"));
    LTX_RETURN_IF_ERROR(CudaStatus(cudaMemset(buffers->timestamps_[rank].records, kPoisonByte,
                                              sizeof(PhaseTimestampRecord) * ops * blocks),
                                   "cudaMemset(phase records)"));
    // The memset ran on the legacy stream, which the ranks' non-blocking streams do not wait
    // for: let it land before any kernel records a phase.
    LTX_RETURN_IF_ERROR(CudaStatus(cudaDeviceSynchronize(), "cudaDeviceSynchronize"));
  }
  return buffers;
}

PhaseRecordBuffers::~PhaseRecordBuffers() {
  for (size_t rank = 0; rank < devices_.size(); ++rank) {
    if (timestamps_[rank].records == nullptr) continue;
    cudaSetDevice(devices_[rank]);
    cudaFree(timestamps_[rank].records);
  }
}

CallOptions PhaseRecordBuffers::TimedCall(int rank, Protocol protocol) const {
  CallOptions call;
  call.protocol = protocol;
  call.blocks = blocks_;
  call.phase_timestamps = &timestamps_[rank];
  return call;
}

void PhaseRecordBuffers::ExpectSlotsRecorded(int start_slot, int end_slot,
                                             const std::vector<int>& reached) const {
  // On a GPU that other ranks' spinning blocks share, a block's warps are scheduled beside theirs,
  // and its other warps may record their last phases long after warp 0 read the end. Under
  // compute-sanitizer (the bundle's sanitize.sh sets LTX_TEST_UNDER_SANITIZER) every warp runs
  // instrumented, many times slower, and only the lower bound holds.
  const char* sanitizer = std::getenv("LTX_TEST_UNDER_SANITIZER");
  const bool bounded = sanitizer == nullptr || *sanitizer == '\0';
  const uint64_t slack = RanksShareGpus(devices_) ? kSharedGpuPhaseSlackNs : kPhaseEndSlackNs;
  for (size_t rank = 0; rank < devices_.size(); ++rank) {
    std::vector<PhaseTimestampRecord> host(static_cast<size_t>(ops_) * blocks_);
    ASSERT_EQ(cudaSetDevice(devices_[rank]), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(host.data(), timestamps_[rank].records,
                         sizeof(PhaseTimestampRecord) * host.size(), cudaMemcpyDeviceToHost),
              cudaSuccess);
    uint64_t first_op = host[0].op;
    for (const PhaseTimestampRecord& record : host) first_op = std::min(first_op, record.op);
    for (size_t i = 0; i < host.size(); ++i) {
      const PhaseTimestampRecord& record = host[i];
      const int block = static_cast<int>(i % blocks_);
      EXPECT_NE(record.op, 0u) << "rank " << rank;
      EXPECT_LT(record.op - first_op, static_cast<uint64_t>(ops_))
          << "rank " << rank << " block " << block << ": op " << record.op
          << " is not among the last ops (a record no block wrote?)";
      EXPECT_EQ(PhaseRecordIndex(record.op, block, ops_, blocks_), static_cast<int64_t>(i))
          << "rank " << rank << ": op " << record.op << " in the record of another op";
      const uint64_t start = record.ns[start_slot];
      const uint64_t end = record.ns[end_slot];
      EXPECT_GE(end, start) << "rank " << rank;
      for (int slot : reached) {
        EXPECT_GE(record.ns[slot], start) << "rank " << rank << " phase " << slot;
        if (bounded) {
          EXPECT_LE(record.ns[slot], end + slack) << "rank " << rank << " phase " << slot;
        }
      }
    }
  }
}

}  // namespace ltx
