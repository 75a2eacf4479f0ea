#pragma once
// What a route sees of an HTTP exchange, independent of the transport library: the request
// (already framed, size-checked and authenticated) and the response it builds. A response whose
// body is produced over time (SSE, or a JSON answer that waits for generation) carries an
// AsyncBody that the connection pumps whenever the engine loop signals news, so no thread waits
// on a request.
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace baton::server {

struct HttpRequest {
  std::string method;  // as sent: "GET", "POST", ...
  std::string path;    // the target without its query string, not percent-decoded
  std::string body;
  // The conversation the client says this request belongs to (x-session-affinity and the
  // agents' own session headers; session_key in request_head.h): per-session cache figures.
  std::string session;
};

class AsyncBody;

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra: Retry-After, Allow, ...
  std::shared_ptr<AsyncBody> async;                          // set: the answer comes later

  void set_header(std::string name, std::string value) {
    headers.emplace_back(std::move(name), std::move(value));
  }
};

class AsyncBody {
 public:
  virtual ~AsyncBody() = default;
  // true: a 200 text/event-stream head goes out at once and pull() yields body bytes;
  // false: pull() eventually yields the whole response (status, headers, body).
  virtual bool streams() const = 0;
  // `wake` may be called from any thread (the engine loop) when pull() has something new.
  virtual void set_wakeup(std::function<void()> wake) = 0;
  // Called on the connection's strand. Streams append what may be sent to `chunk`; deferred
  // answers fill `response` when they are ready. `keepalive_due`: nothing was sent for the
  // keepalive period (a stream may send a comment). Returns true when nothing more will come.
  virtual bool pull(bool keepalive_due, std::string& chunk, HttpResponse& response) = 0;
  // The client left, stalled past the send deadline, or the server is closing: stop the work.
  virtual void abandon(const char* why) = 0;
};

}  // namespace baton::server
