#include "toolcall/kimi_k3_format.h"

#include <map>
#include <optional>

#include "toolcall/markup_scan.h"
#include "util/json_depth.h"

namespace baton::toolcall {

using markup::Block;
using markup::BlockResult;
using markup::Cursor;
using markup::Match;

namespace {

constexpr std::string_view kOpen = "<|open|>";
constexpr std::string_view kSep = "<|sep|>";
constexpr std::string_view kThinkOpen = "<|open|>think<|sep|>";
constexpr std::string_view kThinkClose = "<|close|>think<|sep|>";
constexpr std::string_view kResponseOpen = "<|open|>response<|sep|>";
constexpr std::string_view kToolsOpen = "<|open|>tools<|sep|>";
constexpr std::string_view kToolsClose = "<|close|>tools<|sep|>";
constexpr std::string_view kCallOpen = "<|open|>call ";
constexpr size_t kMaxAttrs = 1024;  // an open tag longer than this is prose, not markup

// Tags around the answer that carry nothing: dropped from content wherever they appear.
const std::vector<std::string> kChannelMarks = {"<|open|>response<|sep|>",
                                                "<|close|>response<|sep|>",
                                                "<|close|>message<|sep|>", "<|end_of_msg|>"};

std::string decode_entities(std::string_view s) {
  static const std::pair<std::string_view, char> kEntities[] = {
      {"&amp;", '&'}, {"&quot;", '"'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&apos;", '\''}};
  std::string out;
  for (size_t i = 0; i < s.size();) {
    bool matched = false;
    for (auto [name, c] : kEntities) {
      if (s.substr(i, name.size()) == name) {
        out += c;
        i += name.size();
        matched = true;
        break;
      }
    }
    if (!matched) out += s[i++];
  }
  return out;
}

using Attrs = std::map<std::string, std::string, std::less<>>;

// key="value" pairs separated by spaces; nullopt when the text is not that.
std::optional<Attrs> parse_attrs(std::string_view s) {
  Attrs attrs;
  size_t i = 0;
  while (true) {
    i = markup::skip_space(s, i);
    if (i == s.size()) return attrs;
    size_t eq = s.find("=\"", i);
    if (eq == markup::npos) return std::nullopt;
    std::string_view key = s.substr(i, eq - i);
    size_t close = s.find('"', eq + 2);
    if (key.empty() || close == markup::npos) return std::nullopt;
    for (char c : key)
      if (markup::is_space(c) || c == '"') return std::nullopt;
    attrs[std::string(key)] = decode_entities(s.substr(eq + 2, close - eq - 2));
    i = close + 1;
  }
}

// "<|open|>TAG attrs<|sep|>" at the cursor (whitespace before it allowed). `partial` when the
// text ends inside it; `no` when something else is there or the attributes are not attributes.
Match open_tag(Cursor& c, std::string_view tag, Attrs& attrs) {
  size_t save = c.pos;
  Match m = c.literal(std::string(kOpen) + std::string(tag));
  if (m != Match::yes) return m;
  size_t stop = c.find(kSep);
  std::string_view inside = c.text.substr(c.pos, stop == markup::npos ? stop : stop - c.pos);
  if (stop == markup::npos) {
    inside.remove_suffix(markup::partial_suffix(inside, kSep));
    bool plausible = inside.size() <= kMaxAttrs && inside.find("<|") == markup::npos &&
                     (inside.empty() || inside.front() == ' ');
    c.pos = save;
    return plausible ? Match::partial : Match::no;
  }
  auto parsed = inside.empty() || inside.front() == ' ' ? parse_attrs(inside) : std::nullopt;
  if (!parsed) {
    c.pos = save;
    return Match::no;
  }
  attrs = std::move(*parsed);
  c.pos = stop + kSep.size();
  return Match::yes;
}

ParamKind kind_of_type(std::string_view type) {
  if (type == "string") return ParamKind::string;
  return type.empty() ? ParamKind::unknown : ParamKind::json;
}

// Reads the tools section (or one bare call) at a block's start.
class CallReader {
 public:
  CallReader(const ParamSchemas& schemas, std::string_view text, bool final, ParsedOutput& out)
      : schemas_(schemas), c_{text, 0}, final_(final), out_(out) {}

  BlockResult block(size_t start) {
    c_.pos = start;
    if (c_.text.substr(start).starts_with(kCallOpen)) return {call(), c_.pos};
    return markup::read_section(c_, final_, {std::string(kToolsOpen)}, {std::string(kToolsClose)},
                                [this] { return call(); });
  }

 private:
  Block call() {
    Attrs attrs;
    Match m = open_tag(c_, "call", attrs);
    if (m != Match::yes) return markup::unopened(m);
    auto tool = attrs.find("tool");
    if (tool == attrs.end() || tool->second.empty()) return Block::not_markup;
    out_.calls.push_back({"", tool->second, ""});
    out_.last_call_open = true;
    for (bool first = true;; first = false) {
      m = c_.literal("<|close|>call<|sep|>");
      if (m == Match::yes) return close_call();
      if (m == Match::partial) return Block::incomplete;
      if (first) {
        m = open_tag(c_, "json", attrs);
        if (m == Match::yes) return json_block();
        if (m == Match::partial) return Block::incomplete;
      }
      if (Block b = argument(first); b != Block::done) return b;
    }
  }

  Block close_call() {
    ToolCall& call = out_.calls.back();
    call.arguments += call.arguments.empty() ? "{}" : "}";
    out_.last_call_open = false;
    return Block::done;
  }

  // A call whose arguments are one JSON object: reported once whole.
  Block json_block() {
    size_t stop = c_.find("<|close|>json<|sep|>");
    if (stop == markup::npos) return Block::incomplete;
    auto args =
        util::parse_json_bounded<nlohmann::ordered_json>(c_.text.substr(c_.pos, stop - c_.pos));
    if (!args.is_object()) return Block::malformed;
    out_.calls.back().arguments = args.dump();
    c_.pos = stop + std::string_view("<|close|>json<|sep|>").size();
    Match m = c_.literal("<|close|>call<|sep|>");
    if (m == Match::yes) {
      out_.last_call_open = false;
      return Block::done;
    }
    return markup::broken(m);
  }

  Block argument(bool first) {
    Attrs attrs;
    Match m = open_tag(c_, "argument", attrs);
    if (m != Match::yes) return markup::broken(m);
    auto key = attrs.find("key");
    if (key == attrs.end()) return Block::malformed;
    ToolCall& call = out_.calls.back();
    call.arguments += first ? "{" : ", ";
    call.arguments += markup::json_quote(key->second) + ": ";
    auto type = attrs.find("type");
    ParamKind kind =
        type == attrs.end() ? schemas_.kind(call.name, key->second) : kind_of_type(type->second);
    return value(call, kind);
  }

  Block value(ToolCall& call, ParamKind kind) {
    constexpr std::string_view end = "<|close|>argument<|sep|>";
    size_t stop = c_.find(end);
    std::string_view raw = c_.text.substr(c_.pos, stop == markup::npos ? stop : stop - c_.pos);
    if (stop == markup::npos) {
      // Stream a string value up to what may still be its close.
      if (kind != ParamKind::string) return Block::incomplete;
      raw.remove_suffix(markup::partial_suffix(raw, end));
      raw.remove_suffix(markup::incomplete_utf8_suffix(raw));
      call.arguments += '"';
      markup::append_json_escaped(call.arguments, raw);
      return Block::incomplete;
    }
    call.arguments += param_json(raw, kind);
    c_.pos = stop + end.size();
    return Block::done;
  }

  const ParamSchemas& schemas_;
  Cursor c_;
  bool final_;
  ParsedOutput& out_;
};

// The prompt opens the think channel (the template's default) or, with thinking off, the
// response channel; the text itself does not say which, so the constructor reads the prompt's
// end and this runs only when it opened think (or when the prompt is not known). Returns the rest
// after the reasoning; nullopt while the text may still be the start of a tag that decides.
std::optional<std::string_view> split_reasoning(std::string_view text, bool final,
                                                std::string& reasoning) {
  std::string_view t = markup::trim_left(text);
  for (std::string_view lit : {kResponseOpen, kToolsOpen}) {
    if (t.starts_with(lit)) return text;
    if (!final && lit.starts_with(t)) return std::nullopt;
  }
  if (t.starts_with(kThinkOpen))
    t.remove_prefix(kThinkOpen.size());
  else if (!final && kThinkOpen.starts_with(t))
    return std::nullopt;
  size_t stop = t.find(kThinkClose);
  if (stop != markup::npos) {
    reasoning = markup::trim(t.substr(0, stop));
    return t.substr(stop + kThinkClose.size());
  }
  if (!final) {
    t.remove_suffix(markup::partial_suffix(t, kThinkClose));
    t = markup::trim_right(t);
    t.remove_suffix(markup::incomplete_utf8_suffix(t));
  }
  reasoning = markup::trim(t);
  return std::string_view();
}

}  // namespace

KimiK3Format::KimiK3Format(const FormatContext& ctx) : schemas_(ctx.tools) {
  starts_in_response_ = markup::trim_right(ctx.prompt_tail).ends_with(kResponseOpen);
}

ParsedOutput KimiK3Format::parse(std::string_view text, bool final) const {
  std::string reasoning;
  auto rest = starts_in_response_ ? std::optional<std::string_view>(text)
                                  : split_reasoning(text, final, reasoning);
  if (!rest) return {};
  std::vector<std::string> openers = kChannelMarks;
  openers.push_back(std::string(kToolsOpen));
  openers.push_back(std::string(kCallOpen));
  ParsedOutput out = markup::scan_blocks(
      *rest, final, openers, [&](std::string_view t, size_t start, bool fin, ParsedOutput& o) {
        for (const auto& mark : kChannelMarks)
          if (t.substr(start).starts_with(mark))
            return BlockResult{Block::done, start + mark.size()};
        return CallReader(schemas_, t, fin, o).block(start);
      });
  out.reasoning = std::move(reasoning);
  return out;
}

std::vector<std::string> KimiK3Format::markers() const {
  return {"<|open|>", "<|close|>", "<|sep|>", "<|end_of_msg|>"};
}

}  // namespace baton::toolcall
