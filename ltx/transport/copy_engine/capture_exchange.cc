// The table through which captured copy-engine calls exchange their output addresses.
#include "ltx/transport/copy_engine/capture_exchange.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "kernels/wire/error_record.h"
#include "ltx/runtime/device_error.h"

namespace ltx {

CaptureExchange::CaptureExchange(int ranks) : ranks_(ranks), next_number_(ranks, 0) {}

absl::StatusOr<std::vector<uint64_t>> CaptureExchange::Exchange(int rank,
                                                                const EntryAnnouncement& mine,
                                                                absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  if (!failure_.ok()) return failure_;
  const uint64_t number = ++next_number_[rank];
  Call& call = calls_[number];
  if (call.entries.empty()) {
    call.entries.resize(ranks_);
    call.readers_left = ranks_;
  }
  call.entries[rank] = mine;
  auto complete = [this, &call]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!failure_.ok()) return true;
    for (const absl::optional<EntryAnnouncement>& entry : call.entries) {
      if (!entry.has_value()) return false;
    }
    return true;
  };
  mu_.AwaitWithTimeout(absl::Condition(&complete), timeout);
  std::vector<uint64_t> outputs;
  absl::Status status = failure_;
  if (status.ok()) status = CheckCall(rank, number, call, mine, &outputs);
  if (absl::IsDeadlineExceeded(status)) {
    status = absl::DeadlineExceededError(
        absl::StrCat(status.message(), " within ", absl::FormatDuration(timeout)));
  }
  Read(number);
  if (!status.ok()) return status;
  return outputs;
}

absl::Status CaptureExchange::CheckCall(int rank, uint64_t number, const Call& call,
                                        const EntryAnnouncement& mine,
                                        std::vector<uint64_t>* outputs) const {
  std::vector<int> missing;
  for (int peer = 0; peer < ranks_; ++peer) {
    if (!call.entries[peer].has_value()) {
      missing.push_back(peer);
      continue;
    }
    DeviceErrorRecord mismatch;
    if (MismatchRecord(mine, *call.entries[peer], rank, peer, number, &mismatch)) {
      const absl::Status error = DeviceErrorToStatus(mismatch);
      return absl::InvalidArgumentError(absl::StrFormat(
          "captured copy-engine call #%d of rank %d: %s", number, rank, error.message()));
    }
    outputs->push_back(call.entries[peer]->output_address);
  }
  if (missing.empty()) return absl::OkStatus();
  return absl::DeadlineExceededError(absl::StrFormat(
      "captured copy-engine call #%d of rank %d: rank(s) %s did not capture their call", number,
      rank, absl::StrJoin(missing, ", ")));
}

void CaptureExchange::Read(uint64_t number) {
  const auto call = calls_.find(number);
  if (--call->second.readers_left == 0) calls_.erase(call);
}

void CaptureExchange::Fail(const absl::Status& error) {
  absl::MutexLock lock(&mu_);
  if (failure_.ok()) failure_ = error;
}

void CaptureExchange::Reset() {
  absl::MutexLock lock(&mu_);
  next_number_.assign(ranks_, 0);
  calls_.clear();
  failure_ = absl::OkStatus();
}

int CaptureExchange::HeldCalls() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(calls_.size());
}

}  // namespace ltx
