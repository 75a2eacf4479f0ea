// DeepSeek V3 / R1 tool calls, in full-width special tokens:
//   <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME
//   ```json
//   {...}
//   ```<｜tool▁call▁end｜>
//   <｜tool▁call▁begin｜>...<｜tool▁call▁end｜><｜tool▁calls▁end｜>
// V3.1 drops the type and the fence:
// <｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}<｜tool▁call▁end｜>. Both are read. R1's reasoning is
// <think>…</think>, split by the streaming layer.
#include <fmt/format.h>

#include "toolcall/format_factories.h"
#include "toolcall/json_scan.h"
#include "toolcall/output_builder.h"

namespace baton::toolcall {
namespace {

constexpr std::string_view kCallsBegin = "<｜tool▁calls▁begin｜>";
constexpr std::string_view kCallsEnd = "<｜tool▁calls▁end｜>";
constexpr std::string_view kCallBegin = "<｜tool▁call▁begin｜>";
constexpr std::string_view kCallEnd = "<｜tool▁call▁end｜>";
constexpr std::string_view kSep = "<｜tool▁sep｜>";
constexpr std::string_view kFence = "```json";
constexpr std::string_view kFenceEnd = "```";
constexpr size_t kWait = std::string_view::npos;
constexpr size_t kMalformed = kWait - 1;

class DeepSeekFormat : public OutputFormat {
 public:
  std::string_view name() const override { return "deepseek"; }
  std::vector<std::string> markers() const override {
    return {std::string(kCallsBegin), std::string(kCallsEnd), std::string(kCallBegin),
            std::string(kCallEnd), std::string(kSep)};
  }

  ParsedOutput parse(std::string_view text, bool final) const override {
    OutputBuilder out(final);
    scan_markers(text, 0, final, {std::string(kCallsBegin), std::string(kCallBegin)}, out,
                 [&](const MarkerHit& hit) {
                   size_t i = hit.which == 0 ? hit.pos + kCallsBegin.size() : hit.pos;
                   return take_section(text, hit.pos, i, final, out);
                 });
    return out.take();
  }

  std::string call_trigger() const override { return std::string(kCallsBegin); }
  // Both spellings, V3/R1 (type, name and a fenced object) and V3.1 (name, object); the model
  // writes the one its template taught.
  std::string call_grammar(const CallGrammarRequest& req, GrammarSink& sink) const override {
    namespace cg = call_grammar;
    const auto tools = cg::tools(req, sink);
    std::string body;
    for (const auto& t : tools) {
      if (t.name.empty() || t.name.find_first_of(" <>\n") != std::string::npos) continue;
      if (!body.empty()) body += " | ";
      body +=
          fmt::format("\"function\" {} {} \"\\n\" {} \"\\n\" {} \"\\n\" {} | {} {} {}",
                      cg::literal(kSep), cg::literal(t.name), cg::literal(kFence), t.arguments,
                      cg::literal(kFenceEnd), cg::literal(t.name), cg::literal(kSep), t.arguments);
    }
    if (body.empty()) return "";
    const std::string call = sink.rule(
        "call", fmt::format("{} ({}) {}", cg::literal(kCallBegin), body, cg::literal(kCallEnd)));
    return cg::literal(kCallsBegin) + " " + cg::one_or_more(call, "\"\\n\"?", req.parallel) + " " +
           cg::literal(kCallsEnd);
  }

 private:
  // The calls from `i` on, up to the end of the section; returns where parsing goes on or kWait.
  // A malformed call is raw content from its begin token (from `start` if it is the first) to
  // the end; while streaming, that text waits.
  static size_t take_section(std::string_view text, size_t start, size_t i, bool final,
                             OutputBuilder& out) {
    std::vector<std::pair<ToolCall, bool>> found;
    size_t next = kWait;
    size_t bad = kWait;
    while (true) {
      i = json::skip_ws(text, i);
      std::string_view rest = text.substr(i);
      if (rest.starts_with(kCallsEnd)) {
        next = i + kCallsEnd.size();
        break;
      }
      if (!rest.starts_with(kCallBegin)) {
        // The section may end without its end token (or stop here while streaming).
        if (!final && (may_become(rest, kCallsEnd) || may_become(rest, kCallBegin))) break;
        if (found.empty()) bad = start;
        next = i;
        break;
      }
      size_t after = take_call(text, i + kCallBegin.size(), final, found);
      if (after == kMalformed) bad = found.empty() ? start : i;
      if (after == kMalformed || after == kWait) break;
      i = after;
    }
    for (auto& [call, open] : found) out.add_call(std::move(call), open);
    if (bad == kWait) return next;
    if (final) out.add_content(text.substr(bad));
    return kWait;
  }

  // One call after its begin token; appends it to `found` (open while streaming) and returns
  // where the next one may start, kWait or kMalformed.
  static size_t take_call(std::string_view text, size_t i, bool final,
                          std::vector<std::pair<ToolCall, bool>>& found) {
    size_t sep = text.find(kSep, i);
    if (sep == std::string_view::npos) return final ? kMalformed : kWait;
    std::string_view head = text.substr(i, sep - i);
    size_t j = sep + kSep.size();
    std::string name;
    size_t a = json::skip_ws(text, j);
    if (a < text.size() && text[a] == '{') {
      name = std::string(head);  // V3.1: NAME<｜tool▁sep｜>{...}
    } else {
      size_t nl = text.find('\n', j);
      if (nl == std::string_view::npos) return final ? kMalformed : kWait;
      name = std::string(text.substr(j, nl - j));
      a = json::skip_ws(text, nl);
      std::string_view f = text.substr(a);
      if (!f.starts_with(kFence)) return !final && may_become(f, kFence) ? kWait : kMalformed;
      a = json::skip_ws(text, a + kFence.size());
    }
    if (name.empty() || name.find_first_of(" <>\n") != std::string::npos) return kMalformed;
    if (a < text.size() && text[a] != '{') return kMalformed;
    json::Scan v = json::scan_value(text, a);
    std::string args(text.substr(a, v.end - a));
    if (v.status != json::Status::complete) {
      if (final) return kMalformed;
      found.push_back({{"", name, args}, true});
      return kWait;
    }
    if (!json::is_object(args)) return kMalformed;
    found.push_back({{"", name, args}, false});
    size_t k = json::skip_ws(text, v.end);
    if (text.substr(k).starts_with(kFenceEnd)) k = json::skip_ws(text, k + kFenceEnd.size());
    std::string_view rest = text.substr(k);
    if (rest.starts_with(kCallEnd)) return k + kCallEnd.size();
    if (!final && (may_become(rest, kCallEnd) || may_become(rest, kFenceEnd))) return kWait;
    return kMalformed;
  }
};

}  // namespace

std::unique_ptr<OutputFormat> make_deepseek_format() {
  return std::make_unique<DeepSeekFormat>();
}

}  // namespace baton::toolcall
