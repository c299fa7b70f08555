// One host thread per GPU.
#include "ltx/device_worker.h"

#include <cuda_runtime_api.h>

#include <utility>

#include "absl/synchronization/notification.h"

namespace ltx {

DeviceWorker::DeviceWorker(int device) : device_(device), thread_([this] { Loop(); }) {}

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
    absl::AnyInvocable<void() &&> task;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](DeviceWorker* w) ABSL_EXCLUSIVE_LOCKS_REQUIRED(w->mu_) {
            return w->stopping_ || !w->tasks_.empty();
          },
          this));
      if (tasks_.empty()) return;  // stopping_ and nothing left to run.
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    std::move(task)();
  }
}

}  // namespace ltx
