#include "toolcall/json_call.h"

namespace baton::toolcall::json {
namespace {

// Records a member's value into `out`; returns the scan of the value.
Scan take_member(std::string_view text, size_t pos, std::string_view key, const CallKeys& keys,
                 CallScan& out) {
  bool is_args =
      key == keys.arguments || (!keys.alt_arguments.empty() && key == keys.alt_arguments);
  Scan v = scan_value(text, pos);
  if (is_args) {
    if (text[pos] == '{') {
      // Streams: whatever of the object is written so far (up to an error, if any).
      out.arguments = std::string(text.substr(pos, v.end - pos));
      out.arguments_complete = v.status == Status::complete;
    } else if (text[pos] == '"') {
      if (v.status != Status::complete) return v;
      auto s = decode_string(text.substr(pos, v.end - pos));
      if (!s || !is_object(*s)) return {Status::invalid, pos};
      out.arguments = *s;
      out.arguments_complete = true;
    } else {
      return {Status::invalid, pos};
    }
    return v;
  }
  bool is_name = key == keys.name;
  bool is_id = !keys.id.empty() && key == keys.id;
  if (!is_name && !is_id) return v;
  if (text[pos] != '"') return {Status::invalid, pos};
  if (v.status != Status::complete) return v;
  auto s = decode_string(text.substr(pos, v.end - pos));
  if (!s) return {Status::invalid, pos};
  (is_name ? out.name : out.id) = std::move(*s);
  return v;
}

}  // namespace

CallScan scan_call(std::string_view text, size_t pos, const CallKeys& keys) {
  CallScan out;
  auto stop = [&](Scan s) {
    out.status = s.status;
    out.end = s.end;
    return out;
  };
  size_t i = skip_ws(text, pos);
  if (i >= text.size()) return stop({Status::partial, text.size()});
  if (text[i] != '{') return stop({Status::invalid, i});
  ++i;
  bool first = true;
  while (true) {
    i = skip_ws(text, i);
    if (i >= text.size()) return stop({Status::partial, text.size()});
    if (text[i] == '}' && first) break;
    if (!first) {
      if (text[i] == '}') break;
      if (text[i] != ',') return stop({Status::invalid, i});
      i = skip_ws(text, i + 1);
      if (i >= text.size()) return stop({Status::partial, text.size()});
    }
    first = false;
    Scan k = scan_string(text, i);
    if (k.status != Status::complete) return stop(k);
    auto key = decode_string(text.substr(i, k.end - i));
    if (!key) return stop({Status::invalid, i});
    i = skip_ws(text, k.end);
    if (i >= text.size()) return stop({Status::partial, text.size()});
    if (text[i] != ':') return stop({Status::invalid, i});
    i = skip_ws(text, i + 1);
    if (i >= text.size()) return stop({Status::partial, text.size()});
    Scan v = take_member(text, i, *key, keys, out);
    if (v.status != Status::complete) return stop(v);
    i = v.end;
  }
  if (!out.name) return stop({Status::invalid, i});
  if (out.arguments.empty()) out.arguments = "{}";
  // The scanner checks numbers by their characters only; the whole object is checked here.
  if (!is_object(out.arguments)) return stop({Status::invalid, i});
  out.arguments_complete = true;
  return stop({Status::complete, i + 1});
}

}  // namespace baton::toolcall::json
