#pragma once
// One JSON line per submitted request: what the server rendered and tokenized from the client's
// request (the prompt decoded with special tokens shown), the generation settings, and which
// script rule answered. Tests read it to check templates and tool-call rendering.
#include <cstdint>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "sched/engine_loop.h"

namespace baton::agents {

struct LoggedRequest {
  int64_t n = 0;
  std::string prompt;
  // The texts of the prompt's control tokens, in order: shows which markup the server
  // tokenized as control tokens (the template's) and which as plain text (users' and tools').
  std::vector<std::string> control_tokens;
  const sched::GenerateRequest* request = nullptr;
  std::string rule;
  std::string reply;
};

class RequestLog {
 public:
  // Empty path: logging off. Throws std::runtime_error when the file cannot be opened.
  explicit RequestLog(const std::string& path);
  void write(const LoggedRequest& r);

 private:
  std::mutex mu_;
  std::ofstream out_;
};

}  // namespace baton::agents
