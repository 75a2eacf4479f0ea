#include "toolcall/output_builder.h"

#include <algorithm>

namespace baton::toolcall {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

}  // namespace

void OutputBuilder::add_content(std::string_view text) {
  if (after_call_) {
    while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  }
  size_t body = text.size();
  while (body > 0 && is_space(text[body - 1])) --body;
  if (body == 0) {
    pending_ws_.append(text);
    return;
  }
  out_.content += pending_ws_;
  out_.content.append(text.substr(0, body));
  pending_ws_.assign(text.substr(body));
  after_call_ = false;
}

void OutputBuilder::add_call(ToolCall call, bool open) {
  pending_ws_.clear();
  after_call_ = true;
  out_.calls.push_back(std::move(call));
  out_.last_call_open = open;
}

ParsedOutput OutputBuilder::take() {
  if (final_) out_.content += pending_ws_;
  pending_ws_.clear();
  return std::move(out_);
}

size_t partial_marker_start(std::string_view text, std::string_view marker) {
  size_t longest = std::min(text.size(), marker.size() - 1);
  for (size_t n = longest; n > 0; --n) {
    if (text.substr(text.size() - n) == marker.substr(0, n)) return text.size() - n;
  }
  return text.size();
}

MarkerHit find_first(std::string_view text, size_t from, const std::vector<std::string>& markers) {
  MarkerHit best;
  for (size_t k = 0; k < markers.size(); ++k) {
    size_t p = text.find(markers[k], from);
    if (p < best.pos) best = {p, k};
  }
  return best;
}

size_t certain_end(std::string_view text, size_t limit, const std::vector<std::string>& markers,
                   bool final) {
  if (final) return limit;
  size_t end = limit;
  for (const auto& m : markers) end = std::min(end, partial_marker_start(text.substr(0, limit), m));
  return end;
}

void scan_markers(std::string_view text, size_t pos, bool final,
                  const std::vector<std::string>& opens, OutputBuilder& out,
                  const std::function<size_t(const MarkerHit& hit)>& take) {
  while (pos != std::string_view::npos) {
    MarkerHit hit = find_first(text, pos, opens);
    if (!hit.found()) {
      out.add_content(text.substr(pos, certain_end(text, text.size(), opens, final) - pos));
      return;
    }
    out.add_content(text.substr(pos, hit.pos - pos));
    pos = take(hit);
  }
}

}  // namespace baton::toolcall
