// One host thread per GPU.
#include "ltx/runtime/device_worker.h"

#include <cuda_runtime_api.h>

#include <utility>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"

namespace ltx {

DeviceWorker::DeviceWorker(int device, absl::Duration spin)
    : device_(device), spin_(spin), thread_([this] { Loop(); }) {}

DeviceWorker::~DeviceWorker() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
}

void DeviceWorker::Post(absl::AnyInvocable<void() &&> task) {
  absl::MutexLock lock(&mu_);
  tasks_.push_back(std::move(task));
  queued_.fetch_add(1, std::memory_order_release);
}

absl::Status DeviceWorker::Run(absl::AnyInvocable<absl::Status() &&> task) {
  absl::Status result;
  absl::Notification done;
  Post([&result, &done, task = std::move(task)]() mutable {
    result = std::move(task)();
    done.Notify();
  });
  done.WaitForNotification();
  return result;
}

void DeviceWorker::Loop() {
  cudaSetDevice(device_);
  for (;;) {
    if (spin_ > absl::ZeroDuration()) {
      const absl::Time until = absl::Now() + spin_;
      while (queued_.load(std::memory_order_acquire) == 0 && absl::Now() < until) {
      }
    }
    absl::AnyInvocable<void() &&> task;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](DeviceWorker* w)
               ABSL_EXCLUSIVE_LOCKS_REQUIRED(w->mu_) { return w->stopping_ || !w->tasks_.empty(); },
          this));
      if (tasks_.empty()) return;  // stopping_ and nothing left to run.
      task = std::move(tasks_.front());
      tasks_.pop_front();
      queued_.fetch_sub(1, std::memory_order_relaxed);
    }
    std::move(task)();
  }
}

}  // namespace ltx
