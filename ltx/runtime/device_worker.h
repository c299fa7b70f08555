// A host thread that owns one GPU: it makes the GPU current once and runs the tasks posted to it,
// in order. The Runtime keeps one per GPU and hands each collective's launch to them.
#ifndef LTX_RUNTIME_DEVICE_WORKER_H_
#define LTX_RUNTIME_DEVICE_WORKER_H_

#include <atomic>
#include <deque>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ltx {

class DeviceWorker {
 public:
  // Starts the thread; it calls cudaSetDevice(device) before running any task. (Whether that
  // worked shows in the tasks' own CUDA calls; Runtime::Create checks it with its first task.)
  // After each task the thread polls for the next one for `spin` before it sleeps, trading a
  // little CPU for a faster hand-off.
  explicit DeviceWorker(int device, absl::Duration spin = absl::ZeroDuration());

  // Runs the tasks already posted, then joins the thread.
  ~DeviceWorker();

  DeviceWorker(const DeviceWorker&) = delete;
  DeviceWorker& operator=(const DeviceWorker&) = delete;

  int device() const { return device_; }

  // Queues `task` to run on the worker thread after the tasks posted before it. Thread-safe;
  // never blocks on the GPU.
  void Post(absl::AnyInvocable<void() &&> task);

  // Runs `task` on the worker thread and returns its result; blocks until it has run.
  // Thread-safe. Must not be called from the worker thread itself.
  absl::Status Run(absl::AnyInvocable<absl::Status() &&> task);

 private:
  void Loop();

  const int device_;
  const absl::Duration spin_;
  // Tasks posted and not yet taken; read without the lock while spinning.
  std::atomic<int> queued_{0};
  absl::Mutex mu_;
  std::deque<absl::AnyInvocable<void() &&>> tasks_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace ltx

#endif  // LTX_RUNTIME_DEVICE_WORKER_H_
