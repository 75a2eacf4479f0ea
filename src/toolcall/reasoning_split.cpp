#include "toolcall/reasoning_split.h"

#include "toolcall/output_builder.h"

namespace baton::toolcall {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::string_view ltrim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  return s;
}

}  // namespace

ReasoningSplit split_reasoning(std::string_view text, const ReasoningOptions& r, bool final) {
  if (!r.enabled || r.open.empty() || r.close.empty()) return {"", text};
  size_t body_start = 0;
  if (!r.starts_open) {
    std::string_view t = ltrim(text);
    if (t.substr(0, r.open.size()) == r.open) {
      body_start = text.size() - t.size() + r.open.size();
    } else if (!final && std::string_view(r.open).substr(0, t.size()) == t) {
      return {"", ""};  // may still become the open marker
    } else {
      return {"", text};
    }
  }
  std::string_view body = text.substr(body_start);
  size_t close = body.find(r.close);
  if (close == std::string_view::npos) {
    // Unclosed: all reasoning at the end; while streaming, not a possible start of the close
    // marker nor trailing whitespace (trimmed if the block closes right after it).
    if (!final) body = body.substr(0, partial_marker_start(body, r.close));
    return {std::string(trim(body)), ""};
  }
  return {std::string(trim(body.substr(0, close))), ltrim(body.substr(close + r.close.size()))};
}

}  // namespace baton::toolcall
