// EngineLoop: LoopCore plus the one thread that owns the engine.
#include "sched/engine_loop.h"

#include <atomic>
#include <mutex>
#include <thread>

#include "sched/loop_core.h"
#include "util/log.h"

namespace baton::sched {

struct EngineLoop::Impl {
  Impl(engine::Engine& e, SchedConfig c) : core(e, std::move(c)) {}
  void run();

  LoopCore core;
  std::mutex lifecycle_mu;  // start/shutdown
  std::thread thread;
  bool started = false;
  bool stopped = false;
  std::atomic<bool> stop_requested{false};
};

void EngineLoop::Impl::run() {
  using namespace std::chrono;
  std::optional<Clock::time_point> deadline;
  for (;;) {
    if (stop_requested.load()) {
      if (!deadline) {
        core.stop_admitting();
        deadline = Clock::now() +
                   duration_cast<Clock::duration>(duration<double>(core.config().shutdown_grace_s));
      }
      if (!core.has_running() || Clock::now() >= *deadline) {
        core.finish_all(FinishReason::Shutdown);
        return;
      }
    }
    bool worked = false;
    try {
      worked = core.step();
    } catch (const std::exception& e) {
      // A bug in the loop must not take the server down silently; keep serving.
      log::error("engine loop step error: {}", e.what());
    }
    if (!worked) {
      // Polls while requests exist so cancels and drained channels are seen promptly.
      core.wait_for_work(core.has_requests() ? milliseconds(2) : milliseconds(100));
    }
  }
}

EngineLoop::EngineLoop(engine::Engine& engine, SchedConfig config)
    : impl_(std::make_unique<Impl>(engine, std::move(config))) {}

EngineLoop::~EngineLoop() {
  shutdown();
}

void EngineLoop::start() {
  std::lock_guard<std::mutex> lock(impl_->lifecycle_mu);
  if (impl_->started || impl_->stopped) return;
  impl_->started = true;
  log::info("{}", impl_->core.config().describe());
  impl_->thread = std::thread([this] { impl_->run(); });
}

std::shared_ptr<RequestHandle> EngineLoop::submit(GenerateRequest req) {
  return impl_->core.submit(std::move(req));
}

void EngineLoop::shutdown() {
  std::lock_guard<std::mutex> lock(impl_->lifecycle_mu);
  if (impl_->stopped) return;
  impl_->stopped = true;
  impl_->stop_requested.store(true);
  impl_->core.stop_admitting();
  if (impl_->thread.joinable()) {
    log::info(
        "draining: new requests and /health get 503; running requests have up to {:g} s "
        "(--shutdown-grace-s) to finish",
        impl_->core.config().shutdown_grace_s);
    impl_->thread.join();
  } else {
    impl_->core.finish_all(FinishReason::Shutdown);  // never started: no loop thread to race
  }
  log::info("engine loop stopped");
}

Metrics EngineLoop::metrics() const {
  return impl_->core.metrics();
}
StatusSnapshot EngineLoop::status() const {
  return impl_->core.status();
}
bool EngineLoop::draining() const {
  return impl_->core.draining();
}
const SchedConfig& EngineLoop::config() const {
  return impl_->core.config();
}

std::shared_ptr<const LiveFeed> EngineLoop::live() const {
  return impl_->core.live();
}

}  // namespace baton::sched
