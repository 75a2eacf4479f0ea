#pragma once
// The live view's event stream (GET /events, read by /dashboard): every viewer is a cursor into
// the engine loop's step ring (sched/live_feed.h) and gets, as server-sent events, the step
// records it has not seen and a status snapshot about once a second.
//
// Why it never slows the loop: the loop only pushes into the ring, whatever the viewers do. One
// hub thread, not the loop, notices new records (every 100 ms) and the status snapshot (one
// per second for all viewers together), and wakes the viewers' connections; each connection
// then reads and formats its own records on an I/O thread, one write at a time. A viewer that
// stops reading holds at most one write (kMaxStepsPerWrite records); its cursor falls behind,
// the ring overwrites what it missed, and when it reads again it is told how many steps it
// lost (or the send deadline drops it). Memory is the ring plus a cursor per viewer, and
// viewers are capped at kMaxViewers.
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "sched/live_feed.h"
#include "server/http/http_types.h"

namespace baton::server {

struct LiveShared;

class LiveHub {
 public:
  static constexpr int kMaxViewers = 256;
  static constexpr size_t kMaxStepsPerWrite = 256;
  // `status_text` makes the status snapshot (the /status JSON) given the number of viewers;
  // `closing` says the server is draining, which ends every viewer's stream.
  LiveHub(std::shared_ptr<const sched::LiveFeed> feed,
          std::function<std::string(int viewers)> status_text, std::function<bool()> closing);
  ~LiveHub();  // stop()
  LiveHub(const LiveHub&) = delete;
  LiveHub& operator=(const LiveHub&) = delete;
  // Ends the viewers' streams and joins the hub thread, after which the status and closing
  // functions are never called again (the server stops the hub before the backend they read
  // goes away). Idempotent.
  void stop();

  // A new viewer's stream; nullptr when kMaxViewers are already watching.
  std::shared_ptr<AsyncBody> open_viewer();
  int viewers() const;

 private:
  void run();
  std::shared_ptr<LiveShared> shared_;
  std::thread thread_;
};

}  // namespace baton::server
