#pragma once
// The scheduler as the HTTP layer sees it. EngineLoopBackend forwards to sched::EngineLoop; tests
// can script events through their own Backend without an engine.
#include <memory>

#include "sched/engine_loop.h"

namespace baton::server {

class Backend {
 public:
  virtual ~Backend() = default;
  // Throws sched::SubmitError.
  virtual std::shared_ptr<sched::RequestHandle> submit(sched::GenerateRequest req) = 0;
  virtual sched::StatusSnapshot status() const = 0;
  virtual sched::Metrics metrics() const = 0;
  virtual const sched::SchedConfig& config() const = 0;
  // Shutting down: new requests are refused. Cheap (health checks ask it), unlike metrics().
  virtual bool draining() const = 0;
  // The engine loop's step history for the live view; null when there is none to watch.
  virtual std::shared_ptr<const sched::LiveFeed> live() const { return nullptr; }
};

class EngineLoopBackend : public Backend {
 public:
  explicit EngineLoopBackend(sched::EngineLoop& loop) : loop_(loop) {}
  std::shared_ptr<sched::RequestHandle> submit(sched::GenerateRequest req) override {
    return loop_.submit(std::move(req));
  }
  sched::StatusSnapshot status() const override { return loop_.status(); }
  sched::Metrics metrics() const override { return loop_.metrics(); }
  const sched::SchedConfig& config() const override { return loop_.config(); }
  bool draining() const override { return loop_.draining(); }
  std::shared_ptr<const sched::LiveFeed> live() const override { return loop_.live(); }

 private:
  sched::EngineLoop& loop_;
};

}  // namespace baton::server
