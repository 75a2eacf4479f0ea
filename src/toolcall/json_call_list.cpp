#include "toolcall/json_call_list.h"

namespace baton::toolcall::json {

CallList scan_call_list(std::string_view text, size_t pos, const CallKeys& keys, bool need_id) {
  CallList out;
  auto stop = [&](Status s, size_t end) {
    out.status = s;
    out.end = end;
    return out;
  };
  size_t i = skip_ws(text, pos);
  if (i >= text.size()) return stop(Status::partial, text.size());
  if (text[i] != '[') return stop(Status::invalid, i);
  i = skip_ws(text, i + 1);
  if (i < text.size() && text[i] == ']') return stop(Status::complete, i + 1);
  while (true) {
    CallScan c = scan_call(text, i, keys);
    bool shown = c.name && (c.status == Status::complete || !need_id || c.id);
    if (shown) {
      out.calls.push_back({c.id.value_or(""), *c.name, c.arguments});
      out.last_open = c.status != Status::complete;
    }
    if (c.status != Status::complete) return stop(c.status, c.end);
    i = skip_ws(text, c.end);
    if (i >= text.size()) return stop(Status::partial, text.size());
    if (text[i] == ']') return stop(Status::complete, i + 1);
    if (text[i] != ',') return stop(Status::invalid, i);
    i = skip_ws(text, i + 1);
  }
}

}  // namespace baton::toolcall::json
