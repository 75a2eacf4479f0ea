#include "toolcall/xml_call_format.h"

#include "toolcall/markup_scan.h"

namespace baton::toolcall {

using markup::Block;
using markup::BlockResult;
using markup::Cursor;
using markup::Match;

namespace {

constexpr size_t kMaxName = 256;  // a "name" longer than this is prose, not markup
constexpr std::string_view kCdataOpen = "<![CDATA[";
constexpr std::string_view kCdataClose = "]]>";

// Whether a function name or parameter key read so far (up to `end`, its closing literal, of
// which the text may hold a beginning) can still be one.
bool plausible_name(std::string_view s, std::string_view end) {
  s = markup::trim(s.substr(0, s.size() - markup::partial_suffix(s, end)));
  if (s.size() > kMaxName) return false;
  for (char c : s)
    if (c == '<' || c == '>' || c == '\n' || c == '"') return false;
  return true;
}

// Reads one call (or one section of calls) for a spec; one object per parse of a block.
class CallReader {
 public:
  CallReader(const XmlCallSpec& spec, const ParamSchemas& schemas, std::string_view text,
             bool final, ParsedOutput& out)
      : spec_(spec), schemas_(schemas), c_{text, 0}, final_(final), out_(out) {}

  BlockResult block(size_t start) {
    c_.pos = start;
    return markup::read_section(c_, final_, spec_.section_open, spec_.section_close,
                                [this] { return call(); });
  }

 private:
  Block call() {
    Match m = c_.literals(spec_.call_open);
    if (m != Match::yes) return markup::unopened(m);
    if (Block b = function_name(); b != Block::done) return b;
    for (bool first = true;; first = false) {
      m = c_.literal(spec_.call_close.front());
      if (m == Match::yes) return close_call();
      if (m == Match::partial) return Block::incomplete;
      if (Block b = parameter(first); b != Block::done) return b;
    }
  }

  Block function_name() {
    size_t start = c_.pos, stop;
    if (!spec_.name_end.empty()) {
      stop = c_.find(spec_.name_end);
    } else {
      stop = c_.text.find_first_of("<\n", start);
    }
    std::string_view name = c_.text.substr(start, stop == markup::npos ? stop : stop - start);
    if (!plausible_name(name, spec_.name_end)) return Block::not_markup;
    if (stop == markup::npos) return Block::incomplete;
    name = markup::trim(name);
    if (name.empty()) return Block::not_markup;
    c_.pos = stop + spec_.name_end.size();
    out_.calls.push_back({"", std::string(name), "{"});
    out_.last_call_open = true;
    return Block::done;
  }

  Block close_call() {
    ToolCall& call = out_.calls.back();
    call.arguments += '}';
    out_.last_call_open = false;
    return markup::close_rest(c_, final_, spec_.call_close);
  }

  Block parameter(bool first) {
    Match m = c_.literals(spec_.param_open);
    if (m != Match::yes) return markup::broken(m);
    size_t stop = c_.find(spec_.key_end);
    std::string_view key = c_.text.substr(c_.pos, stop == markup::npos ? stop : stop - c_.pos);
    if (!plausible_name(key, spec_.key_end)) return Block::malformed;
    if (stop == markup::npos) return Block::incomplete;
    c_.pos = stop + spec_.key_end.size();
    if (!spec_.value_open.empty()) {
      m = c_.literals(spec_.value_open);
      if (m != Match::yes) return markup::broken(m);
    }
    ToolCall& call = out_.calls.back();
    if (!first) call.arguments += ", ";
    call.arguments += markup::json_quote(key) + ": ";
    if (spec_.trim_newlines && c_.exact("\n") == Match::partial) return Block::incomplete;
    return value(call, key);
  }

  Block value(ToolCall& call, std::string_view key) {
    std::string end = spec_.value_end;
    if (auto at = end.find("{key}"); at != std::string::npos) end.replace(at, 5, key);
    ParamKind kind = schemas_.kind(call.name, key);
    if (spec_.cdata) {
      Match m = c_.exact(kCdataOpen);
      if (m == Match::partial) return Block::incomplete;
      if (m == Match::yes) return cdata_value(call, kind, end);
    }
    size_t stop = c_.find(end);
    std::string_view raw = c_.text.substr(c_.pos, stop == markup::npos ? stop : stop - c_.pos);
    if (stop == markup::npos) {
      // Stream a string value up to what may still be the close (or the newline before it).
      if (kind != ParamKind::string) return Block::incomplete;
      raw.remove_suffix(markup::partial_suffix(raw, end));
      if (spec_.trim_newlines && !raw.empty() && raw.back() == '\n') raw.remove_suffix(1);
      raw.remove_suffix(markup::incomplete_utf8_suffix(raw));
      call.arguments += '"';
      markup::append_json_escaped(call.arguments, raw);
      return Block::incomplete;
    }
    if (spec_.trim_newlines && !raw.empty() && raw.back() == '\n') raw.remove_suffix(1);
    call.arguments += param_json(raw, kind);
    c_.pos = stop + end.size();
    return Block::done;
  }

  // The inside of <![CDATA[…]]>, then the value's close.
  Block cdata_value(ToolCall& call, ParamKind kind, std::string_view end) {
    size_t stop = c_.find(kCdataClose);
    std::string_view raw = c_.text.substr(c_.pos, stop == markup::npos ? stop : stop - c_.pos);
    Match m = Match::partial;
    if (stop != markup::npos) {
      c_.pos = stop + kCdataClose.size();
      m = c_.literal(end);
    }
    if (m == Match::no) return Block::malformed;
    if (m == Match::yes) {
      call.arguments += param_json(raw, kind);
      return Block::done;
    }
    // Streamed as far as known (a whole inside waiting for its close streams whole).
    if (kind != ParamKind::string) return Block::incomplete;
    if (stop == markup::npos) raw.remove_suffix(markup::partial_suffix(raw, kCdataClose));
    raw.remove_suffix(markup::incomplete_utf8_suffix(raw));
    call.arguments += '"';
    markup::append_json_escaped(call.arguments, raw);
    return Block::incomplete;
  }

  const XmlCallSpec& spec_;
  const ParamSchemas& schemas_;
  Cursor c_;
  bool final_;
  ParsedOutput& out_;
};

}  // namespace

XmlCallFormat::XmlCallFormat(XmlCallSpec spec, const FormatContext& ctx)
    : spec_(std::move(spec)), schemas_(ctx.tools) {}

ParsedOutput XmlCallFormat::parse(std::string_view text, bool final) const {
  return markup::scan_blocks(text, final,
                             {markup::block_opener(spec_.section_open, spec_.call_open)},
                             [&](std::string_view t, size_t start, bool fin, ParsedOutput& out) {
                               return CallReader(spec_, schemas_, t, fin, out).block(start);
                             });
}

}  // namespace baton::toolcall
