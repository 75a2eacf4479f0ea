#pragma once
// Stops chat-template renderings that run past their time limit. A template loops in Python
// bytecode while holding the interpreter's lock, so nothing else renders meanwhile; a watchdog
// thread takes the lock at the deadline (the interpreter hands it over between bytecodes) and
// raises RenderTimeout in the rendering thread, whose render() then returns an error and leaves
// the interpreter usable. Internal to src/chat.
#include <chrono>
#include <cstdint>

namespace baton::chat::detail {

class RenderDeadline {
 public:
  // With the GIL held, before the rendering starts on this thread. A zero limit arms nothing.
  explicit RenderDeadline(std::chrono::milliseconds limit);
  // With the GIL held, once the rendering returned: disarms, and clears a timeout raised too late
  // to be seen, so that it never lands in this thread's next Python call.
  ~RenderDeadline();
  RenderDeadline(const RenderDeadline&) = delete;
  RenderDeadline& operator=(const RenderDeadline&) = delete;
  // With the GIL held: the watchdog raised the timeout into this rendering.
  bool fired() const;

 private:
  uint64_t ticket_ = 0;
  unsigned long thread_ = 0;
};

}  // namespace baton::chat::detail
