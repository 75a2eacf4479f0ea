#include "toolcall/json_section_format.h"

#include <fmt/format.h>

#include "toolcall/json_call_list.h"
#include "toolcall/output_builder.h"

namespace baton::toolcall {
namespace {

using json::CallList;
using json::CallScan;
using json::Status;

constexpr size_t kWait = std::string_view::npos;

bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

bool only_space(std::string_view s) {
  return json::skip_ws(s, 0) == s.size();
}

std::string_view trim_right(std::string_view s) {
  while (!s.empty() && only_space(s.substr(s.size() - 1))) s.remove_suffix(1);
  return s;
}

std::string_view trim(std::string_view s) {
  s.remove_prefix(json::skip_ws(s, 0));
  return trim_right(s);
}

CallScan stop(CallScan out, Status status, size_t end) {
  out.status = status;
  out.end = end;
  return out;
}

// Apertus's {"NAME": {arguments}} at `pos`. The call is named once its arguments have begun,
// so that a key that is not followed by an object never shows as a call.
CallScan scan_named_call(std::string_view text, size_t pos) {
  CallScan out;
  size_t i = json::skip_ws(text, pos);
  if (i >= text.size()) return stop(out, Status::partial, text.size());
  if (text[i] != '{') return stop(out, Status::invalid, i);
  i = json::skip_ws(text, i + 1);
  if (i >= text.size()) return stop(out, Status::partial, text.size());
  json::Scan key = json::scan_string(text, i);
  if (key.status != Status::complete) return stop(out, key.status, key.end);
  auto name = json::decode_string(text.substr(i, key.end - i));
  if (!name || name->empty()) return stop(out, Status::invalid, i);
  i = json::skip_ws(text, key.end);
  if (i >= text.size()) return stop(out, Status::partial, text.size());
  if (text[i] != ':') return stop(out, Status::invalid, i);
  i = json::skip_ws(text, i + 1);
  if (i >= text.size()) return stop(out, Status::partial, text.size());
  if (text[i] != '{' && text[i] != '"') return stop(out, Status::invalid, i);
  out.name = std::move(name);
  json::Scan v = json::scan_value(text, i);
  if (text[i] == '{') out.arguments = std::string(text.substr(i, v.end - i));
  if (v.status != Status::complete) return stop(out, v.status, v.end);
  if (text[i] == '"') {
    // Arguments written as a string that holds the object: shown once decoded.
    auto s = json::decode_string(text.substr(i, v.end - i));
    if (!s) return stop(out, Status::invalid, i);
    out.arguments = std::move(*s);
  }
  if (!json::is_object(out.arguments)) return stop(out, Status::invalid, i);
  out.arguments_complete = true;
  i = json::skip_ws(text, v.end);
  if (i >= text.size()) return stop(out, Status::partial, text.size());
  if (text[i] != '}') return stop(out, Status::invalid, i);
  return stop(out, Status::complete, i + 1);
}

CallScan scan_item(std::string_view text, size_t pos, CallBody body) {
  return body == CallBody::named_array ? scan_named_call(text, pos) : json::scan_call(text, pos);
}

// Records `c` when its name is known; returns whether the list goes on after it.
bool take(CallList& out, const CallScan& c) {
  if (c.name) {
    out.calls.push_back({"", *c.name, c.arguments});
    out.last_open = c.status != Status::complete;
  }
  if (c.status == Status::complete) return true;
  out.status = c.status;
  out.end = c.end;
  return false;
}

CallList done(CallList out, Status status, size_t end) {
  out.status = status;
  out.end = end;
  return out;
}

// Call objects one after another; the body ends before the first text that opens none, or,
// once generation has ended, at the end of the text.
CallList scan_lines(std::string_view text, size_t pos, bool final) {
  CallList out;
  for (size_t i = json::skip_ws(text, pos);; i = json::skip_ws(text, out.end)) {
    if (i >= text.size())
      return done(std::move(out), final ? Status::complete : Status::partial, text.size());
    if (text[i] != '{') return done(std::move(out), Status::complete, i);
    CallScan c = json::scan_call(text, i);
    if (!take(out, c)) return out;
    out.end = c.end;
  }
}

CallList scan_array(std::string_view text, size_t pos, CallBody body) {
  CallList out;
  size_t i = json::skip_ws(text, pos);
  if (i >= text.size()) return done(std::move(out), Status::partial, text.size());
  if (text[i] != '[') return done(std::move(out), Status::invalid, i);
  i = json::skip_ws(text, i + 1);
  if (i < text.size() && text[i] == ']') return done(std::move(out), Status::complete, i + 1);
  while (true) {
    CallScan c = scan_item(text, i, body);
    if (!take(out, c)) return out;
    i = json::skip_ws(text, c.end);
    if (i >= text.size()) return done(std::move(out), Status::partial, text.size());
    if (text[i] == ']') return done(std::move(out), Status::complete, i + 1);
    if (text[i] != ',') return done(std::move(out), Status::invalid, i);
    i = json::skip_ws(text, i + 1);
  }
}

CallList scan_body(std::string_view text, size_t pos, CallBody body, bool final) {
  switch (body) {
    case CallBody::lines:
      return scan_lines(text, pos, final);
    case CallBody::array:
    case CallBody::named_array:
      return scan_array(text, pos, body);
    case CallBody::single:
      break;
  }
  CallList out;
  CallScan c = json::scan_call(text, pos);
  if (take(out, c)) out = done(std::move(out), Status::complete, c.end);
  return out;
}

class SectionReader {
 public:
  SectionReader(const JsonSectionSpec& spec, std::string_view text, bool final)
      : spec_(spec), text_(text), final_(final), out_(final) {
    openers_ = spec.separators;
    openers_.push_back(spec.open);
  }

  ParsedOutput read() {
    std::string reasoning;
    size_t pos = take_reasoning(reasoning);
    while (pos != kWait) {
      MarkerHit hit = find_first(text_, pos, openers_);
      if (!hit.found()) {
        out_.add_content(
            text_.substr(pos, certain_end(text_, text_.size(), openers_, final_) - pos));
        break;
      }
      const std::string& marker = openers_[hit.which];
      if (marker == spec_.open) {
        out_.add_content(text_.substr(pos, hit.pos - pos));
        pos = take_section(hit.pos);
      } else {
        // A separator ends a turn or a part of one: whitespace around it is layout.
        out_.add_content(trim_right(text_.substr(pos, hit.pos - pos)));
        pos = json::skip_ws(text_, hit.pos + marker.size());
      }
    }
    ParsedOutput p = out_.take();
    p.reasoning = std::move(reasoning);
    return p;
  }

 private:
  // Splits a leading reasoning block; returns where the rest starts, or kWait.
  size_t take_reasoning(std::string& reasoning) const {
    if (spec_.think_open.empty()) return 0;
    size_t s = json::skip_ws(text_, 0);
    std::string_view t = text_.substr(s);
    std::string_view open = spec_.think_open, close = spec_.think_close;
    if (!starts_with(t, open)) return !final_ && starts_with(open, t) ? kWait : 0;
    std::string_view body = t.substr(open.size());
    size_t end = body.find(close);
    if (end == std::string_view::npos) {
      if (!final_) body = body.substr(0, partial_marker_start(body, close));
      reasoning = trim(body);
      return kWait;
    }
    reasoning = trim(body.substr(0, end));
    return s + open.size() + end + close.size();
  }

  // The section whose open marker is at `start`; returns where parsing goes on, or kWait.
  size_t take_section(size_t start) {
    size_t body = start + spec_.open.size();
    CallList list = scan_body(text_, body, spec_.body, final_);
    if (list.status == Status::complete) {
      size_t after = json::skip_ws(text_, list.end);
      std::string_view tail = text_.substr(after);
      std::string_view close = spec_.close;
      bool closed = !close.empty() && starts_with(tail, close);
      bool may_close = !final_ && starts_with(close, tail);
      if (close.empty() || closed || may_close || (final_ && tail.empty())) {
        for (auto& c : list.calls) out_.add_call(std::move(c));
        if (close.empty()) return list.end;
        return closed ? after + close.size() : kWait;
      }
    }
    if (!final_ && (!list.calls.empty() || list.status == Status::partial)) {
      // Still open, or broken after calls that an earlier parse showed: they stay, and the
      // final parse turns the section into content.
      for (size_t k = 0; k < list.calls.size(); ++k)
        out_.add_call(std::move(list.calls[k]), k + 1 == list.calls.size() && list.last_open);
      return kWait;
    }
    return malformed(start, body);
  }

  // The raw section, to its close marker (or to the end), is content.
  size_t malformed(size_t start, size_t body) {
    size_t close = spec_.close.empty() ? kWait : text_.find(spec_.close, body);
    if (close == kWait) {
      if (final_) out_.add_content(text_.substr(start));
      return kWait;
    }
    size_t end = close + spec_.close.size();
    out_.add_content(text_.substr(start, end - start));
    return end;
  }

  const JsonSectionSpec& spec_;
  std::string_view text_;
  bool final_;
  OutputBuilder out_;
  std::vector<std::string> openers_;
};

}  // namespace

std::string JsonSectionFormat::call_grammar(const CallGrammarRequest& req,
                                            GrammarSink& sink) const {
  namespace cg = toolcall::call_grammar;
  const auto tools = cg::tools(req, sink);
  if (tools.empty()) return "";
  const std::string w = cg::ws(sink);
  const std::string brk = spec_.grammar_break.empty() ? "" : cg::literal(spec_.grammar_break);
  std::string call;
  if (spec_.body == CallBody::named_array) {
    std::string body;
    for (const auto& t : tools) {
      if (!body.empty()) body += " | ";
      body += fmt::format("\"{{\" {} {} {} \":\" {} {} {} \"}}\"", w,
                          cg::literal(nlohmann::ordered_json(t.name).dump()), w, w, t.arguments, w);
    }
    call = sink.rule("call", body);
  } else {
    call = cg::json_call(tools, sink, "name", "arguments");
  }
  const std::string open = cg::literal(spec_.grammar_lead + spec_.open);
  const std::string close = spec_.close.empty() ? "" : cg::literal(spec_.close);
  switch (spec_.body) {
    case CallBody::lines:
      return fmt::format("{} {} {} {} {}", open, brk,
                         cg::one_or_more(call, brk.empty() ? w : brk, req.parallel), brk, close);
    case CallBody::array:
    case CallBody::named_array:
      return fmt::format("{} \"[\" {} \"]\" {}", open,
                         cg::one_or_more(call, "\",\" " + w, req.parallel), close);
    case CallBody::single:
      break;
  }
  // Each call in its own section.
  const std::string one = sink.rule("section", fmt::format("{} {} {} {}", open, brk, call, close));
  return cg::one_or_more(one, "", req.parallel);
}

ParsedOutput JsonSectionFormat::parse(std::string_view text, bool final) const {
  return SectionReader(spec_, text, final).read();
}

}  // namespace baton::toolcall
