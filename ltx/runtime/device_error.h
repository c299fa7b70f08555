// Reading the error records the kernels write into host-mapped pinned memory, and turning them
// into absl::Status a person can act on, e.g.
//   DEADLINE_EXCEEDED: all_gather #1042: rank 2 waited 10s at exit for rank 3
// where all_gather is the op's collective (all_to_all, or op when the record does not say) and
// #1042 its op number (kernels/PROTOCOL.md).
#ifndef LTX_RUNTIME_DEVICE_ERROR_H_
#define LTX_RUNTIME_DEVICE_ERROR_H_

#include "absl/status/status.h"
#include "absl/types/optional.h"
#include "kernels/wire/error_record.h"

namespace ltx {

// Returns a copy of `record` if the device has published an error in it (state ==
// kRecordWritten; the fields are read after an acquire fence), else nullopt. Safe to call while
// kernels run.
absl::optional<DeviceErrorRecord> ReadDeviceError(const DeviceErrorRecord* record);

// The Status for a published record, its message led by the op's collective and number:
// DeadlineExceeded for a timeout (naming the rank,
// the phase, the peer waited for and what its flag showed), InvalidArgument for ranks that
// disagree (naming the argument and both values), Aborted for a rank that stopped because a peer
// gave the op up (naming the peer), Internal for a record it cannot decode.
absl::Status DeviceErrorToStatus(const DeviceErrorRecord& record);

}  // namespace ltx

#endif  // LTX_RUNTIME_DEVICE_ERROR_H_
