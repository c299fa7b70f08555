// Tests of ltx::DeviceWorker (ltx/runtime/device_worker.h): tasks run in order on one worker
// thread, Run returns the task's status, destruction drains posted tasks, and concurrent posters
// are each served exactly once. Needs no GPU (the worker's cudaSetDevice may fail).
#include "ltx/runtime/device_worker.h"

#include <atomic>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace ltx {
namespace {

TEST(DeviceWorkerTest, RemembersItsDevice) {
  DeviceWorker worker(3);
  EXPECT_EQ(worker.device(), 3);
}

TEST(DeviceWorkerTest, TasksRunInPostOrderOnOneThreadOtherThanTheCaller) {
  std::vector<int> order;
  std::set<std::thread::id> threads;
  {
    DeviceWorker worker(0);
    for (int i = 0; i < 100; ++i) {
      worker.Post([&order, &threads, i] {
        order.push_back(i);
        threads.insert(std::this_thread::get_id());
      });
    }
    // Run is ordered after the posts, so the vectors are complete when it returns.
    EXPECT_TRUE(worker.Run([] { return absl::OkStatus(); }).ok());
    ASSERT_EQ(order.size(), 100u);
    for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
    ASSERT_EQ(threads.size(), 1u);
    EXPECT_NE(*threads.begin(), std::this_thread::get_id());
  }
}

TEST(DeviceWorkerTest, RunReturnsTheTasksStatus) {
  DeviceWorker worker(0);
  EXPECT_TRUE(worker.Run([] { return absl::OkStatus(); }).ok());
  const absl::Status status = worker.Run([] { return absl::DataLossError("boom"); });
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(status.message(), "boom");
}

TEST(DeviceWorkerTest, RunAndPostShareTheWorkerThread) {
  DeviceWorker worker(0);
  std::thread::id posted_on;
  worker.Post([&posted_on] { posted_on = std::this_thread::get_id(); });
  std::thread::id run_on;
  ASSERT_TRUE(worker
                  .Run([&run_on] {
                    run_on = std::this_thread::get_id();
                    return absl::OkStatus();
                  })
                  .ok());
  EXPECT_EQ(posted_on, run_on);
  EXPECT_NE(run_on, std::this_thread::get_id());
}

TEST(DeviceWorkerTest, DestructorRunsTasksAlreadyPosted) {
  std::atomic<int> ran{0};
  absl::Notification release;
  std::thread releaser;
  {
    DeviceWorker worker(0);
    // The first task blocks the worker so that the others are still queued at destruction.
    worker.Post([&release] { release.WaitForNotification(); });
    for (int i = 0; i < 50; ++i) worker.Post([&ran] { ran.fetch_add(1); });
    releaser = std::thread([&release] {
      absl::SleepFor(absl::Milliseconds(50));
      release.Notify();
    });
  }
  releaser.join();
  EXPECT_EQ(ran.load(), 50);
}

TEST(DeviceWorkerTest, DestroyingAnIdleWorkerReturns) {
  for (int i = 0; i < 20; ++i) DeviceWorker worker(i);
}

TEST(DeviceWorkerTest, ConcurrentPostersEachGetTheirTasksRunExactlyOnce) {
  constexpr int kPosters = 8;
  constexpr int kTasksPerPoster = 500;
  std::vector<std::atomic<int>> runs(kPosters * kTasksPerPoster);
  for (std::atomic<int>& r : runs) r.store(0);
  // Per poster, the order its tasks ran in (touched only on the worker thread).
  std::vector<std::vector<int>> order(kPosters);
  std::set<std::thread::id> worker_threads;
  {
    DeviceWorker worker(0);
    std::vector<std::thread> posters;
    for (int p = 0; p < kPosters; ++p) {
      posters.emplace_back([&, p] {
        for (int i = 0; i < kTasksPerPoster; ++i) {
          const int id = p * kTasksPerPoster + i;
          if (i % 100 == 99) {
            // Mix in blocking Runs from the posting threads.
            const absl::Status status = worker.Run([&, p, i, id] {
              runs[id].fetch_add(1);
              order[p].push_back(i);
              worker_threads.insert(std::this_thread::get_id());
              return absl::OkStatus();
            });
            EXPECT_TRUE(status.ok());
          } else {
            worker.Post([&, p, i, id] {
              runs[id].fetch_add(1);
              order[p].push_back(i);
              worker_threads.insert(std::this_thread::get_id());
            });
          }
        }
      });
    }
    for (std::thread& t : posters) t.join();
  }
  for (int id = 0; id < kPosters * kTasksPerPoster; ++id) {
    ASSERT_EQ(runs[id].load(), 1) << "task " << id;
  }
  for (int p = 0; p < kPosters; ++p) {
    ASSERT_EQ(order[p].size(), static_cast<size_t>(kTasksPerPoster));
    for (int i = 0; i < kTasksPerPoster; ++i) EXPECT_EQ(order[p][i], i) << "poster " << p;
  }
  EXPECT_EQ(worker_threads.size(), 1u);
}

TEST(DeviceWorkerTest, PollingWorkerRunsTasksInOrderAndStops) {
  std::vector<int> order;
  {
    DeviceWorker worker(0, absl::Microseconds(200));
    for (int i = 0; i < 100; ++i) {
      worker.Post([&order, i] { order.push_back(i); });
      if (i % 10 == 0) absl::SleepFor(absl::Microseconds(50));  // Inside and past the poll.
    }
    EXPECT_TRUE(worker.Run([] { return absl::OkStatus(); }).ok());
  }
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
}

}  // namespace
}  // namespace ltx
