#pragma once
// The scripted "model": an ordered list of rules, each matching a request by its decoded prompt
// and giving the reply text. Agent tests describe a conversation this way instead of letting a
// model decide, so every tool call is deterministic. JSON shape (all fields optional except
// "reply"):
//   {"token_delay_ms": 3,
//    "rules": [{"name": "tool turn", "request": 2, "contains": ["a", "b"],
//               "not_contains": ["<tool_response>"], "times": 1, "reply": "text",
//               "token_delay_ms": 5, "finish": "stop" | "length"}]}
// A request takes the first rule whose conditions all hold and that has uses left.
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace baton::agents {

struct Reply {
  std::string rule;  // the rule's name, or its index; "" when none matched
  std::string text;
  int32_t token_delay_ms = 3;
  bool length = false;  // finish with reason length instead of stop
};

class Script {
 public:
  // Throws std::runtime_error (with the file name) on unreadable or malformed scripts.
  static std::unique_ptr<Script> load(const std::string& path);
  static std::unique_ptr<Script> parse(const std::string& json_text, const std::string& origin);

  // `n` counts requests from 1. Thread-safe: "times" is consumed under a lock.
  Reply match(const std::string& prompt, int64_t n);

 private:
  struct Rule {
    std::string name;
    std::optional<int64_t> request;
    std::vector<std::string> contains, not_contains;
    int64_t times_left = -1;  // -1: unlimited
    std::string reply;
    std::optional<int32_t> token_delay_ms;
    bool length = false;
  };
  int32_t token_delay_ms_ = 3;
  std::vector<Rule> rules_;
  std::mutex mu_;
};

}  // namespace baton::agents
