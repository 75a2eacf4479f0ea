#pragma once
// An incremental reader of one HTTP/1.x response, fed whatever a non-blocking socket returned:
// the status, whether the response is complete, and how many SSE `data: [DONE]` lines and
// `: keepalive` comments its body carried. Chunked bodies are scanned as they arrive and not
// kept, so a thousand open streams cost the client little.
#include <memory>
#include <string>
#include <string_view>

namespace baton::bench {

class ResponseReader {
 public:
  ResponseReader();
  ~ResponseReader();
  ResponseReader(ResponseReader&&) noexcept;
  ResponseReader& operator=(ResponseReader&&) noexcept;

  // Feeds received bytes; false once the bytes are not a valid response (error() says why).
  bool feed(std::string_view bytes);
  // The peer closed the connection: ends a body that runs until the close.
  void eof();

  int status() const;  // 0 until the head is in
  bool complete() const;
  long done_events() const;
  long keepalives() const;
  const std::string& error() const;

 private:
  struct Impl;  // keeps Beast out of this header
  std::unique_ptr<Impl> impl_;
};

}  // namespace baton::bench
