// Hermes / Qwen: each call is one JSON object between tags, content may surround them:
//   <tool_call>
//   {"name": "f", "arguments": {...}}
//   </tool_call>
// A last call whose close tag never came (the model stopped right after the object) is still
// a call: Qwen models do that, and the streamed call then needs no taking back.
#include "toolcall/format_factories.h"
#include "toolcall/json_call.h"
#include "toolcall/output_builder.h"

namespace baton::toolcall {
namespace {

constexpr std::string_view kOpen = "<tool_call>";
constexpr std::string_view kClose = "</tool_call>";

bool only_space(std::string_view s) {
  return json::skip_ws(s, 0) == s.size();
}

class HermesFormat : public OutputFormat {
 public:
  std::string_view name() const override { return "hermes"; }
  std::vector<std::string> markers() const override {
    return {std::string(kOpen), std::string(kClose)};
  }

  ParsedOutput parse(std::string_view text, bool final) const override {
    OutputBuilder out(final);
    scan_markers(text, 0, final, {std::string(kOpen)}, out,
                 [&](const MarkerHit& hit) { return take_call(text, hit.pos, final, out); });
    return out.take();
  }

  std::string call_trigger() const override { return std::string(kOpen); }
  std::string call_grammar(const CallGrammarRequest& req, GrammarSink& sink) const override {
    namespace cg = call_grammar;
    const auto tools = cg::tools(req, sink);
    if (tools.empty()) return "";
    const std::string call =
        sink.rule("tool-call", cg::literal(kOpen) + " \"\\n\" " +
                                   cg::json_call(tools, sink, "name", "arguments") + " \"\\n\" " +
                                   cg::literal(kClose));
    return cg::one_or_more(call, "\"\\n\"", req.parallel);
  }

 private:
  // Adds the call at `start` (or its raw text as content when malformed); returns where
  // parsing goes on, or npos when the rest of the text must wait (or was consumed).
  static size_t take_call(std::string_view text, size_t start, bool final, OutputBuilder& out) {
    size_t body = start + kOpen.size();
    json::CallScan call = json::scan_call(text, body);
    if (call.status == json::Status::complete) {
      size_t after = json::skip_ws(text, call.end);
      std::string_view tail = text.substr(after);
      bool closed = tail.substr(0, kClose.size()) == kClose;
      bool may_close = !final && kClose.substr(0, tail.size()) == tail;
      if (closed || may_close || (final && only_space(tail))) {
        out.add_call({call.id.value_or(""), *call.name, call.arguments});
        return closed ? after + kClose.size() : std::string_view::npos;
      }
    } else if (!final && call.name) {
      // Arguments still open (or broken: the final parse will turn the call into content).
      out.add_call({call.id.value_or(""), *call.name, call.arguments}, true);
      return std::string_view::npos;
    } else if (!final && call.status == json::Status::partial) {
      return std::string_view::npos;
    }
    // Malformed: its raw text up to the close tag is content.
    size_t close = text.find(kClose, body);
    if (close == std::string_view::npos) {
      if (final) out.add_content(text.substr(start));
      return std::string_view::npos;
    }
    out.add_content(text.substr(start, close + kClose.size() - start));
    return close + kClose.size();
  }
};

}  // namespace

std::unique_ptr<OutputFormat> make_hermes_format() {
  return std::make_unique<HermesFormat>();
}

}  // namespace baton::toolcall
