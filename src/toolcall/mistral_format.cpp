// Mistral: calls follow [TOOL_CALLS], in one of two spellings:
//   Nemo (v3 tokenizer): [TOOL_CALLS][{"name": "f", "arguments": {...}, "id": "a1B2c3D4e"}, ...]
//   Devstral, Ministral 3 (v7+): [TOOL_CALLS]f[ARGS]{...}[TOOL_CALLS]g[ARGS]{...}
//                        (v11 also writes f[CALL_ID]a1B2c3D4e[ARGS]{...})
// The model's 9-character ids are kept. Ministral's reasoning is a leading [THINK]…[/THINK]
// block, split here since the streaming layer only knows <think>.
#include <cctype>

#include "toolcall/format_factories.h"
#include "toolcall/json_call_list.h"
#include "toolcall/output_builder.h"

namespace baton::toolcall {
namespace {

constexpr std::string_view kCalls = "[TOOL_CALLS]";
constexpr std::string_view kArgs = "[ARGS]";
constexpr std::string_view kCallId = "[CALL_ID]";
constexpr std::string_view kThink = "[THINK]";
constexpr std::string_view kEndThink = "[/THINK]";
constexpr size_t kWait = std::string_view::npos;

bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

std::string_view trim(std::string_view s) {
  size_t b = json::skip_ws(s, 0);
  s.remove_prefix(b);
  while (!s.empty() && json::skip_ws(s, s.size() - 1) == s.size()) s.remove_suffix(1);
  return s;
}

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
}

bool is_name(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!is_name_char(c)) return false;
  return true;
}

class MistralFormat : public OutputFormat {
 public:
  std::string_view name() const override { return "mistral"; }
  std::vector<std::string> markers() const override {
    return {std::string(kCalls), std::string(kArgs), std::string(kCallId), std::string(kThink),
            std::string(kEndThink)};
  }

  ParsedOutput parse(std::string_view text, bool final) const override {
    std::string reasoning;
    size_t pos = take_reasoning(text, final, reasoning);
    OutputBuilder out(final);
    scan_markers(text, pos, final, {std::string(kCalls)}, out,
                 [&](const MarkerHit& hit) { return take_calls(text, hit.pos, final, out); });
    ParsedOutput p = out.take();
    p.reasoning = std::move(reasoning);
    return p;
  }

  // Both spellings: the model's template taught it one of them.
  std::string call_trigger() const override { return std::string(kCalls); }
  std::string call_grammar(const CallGrammarRequest& req, GrammarSink& sink) const override {
    namespace cg = call_grammar;
    const auto tools = cg::tools(req, sink);
    if (tools.empty()) return "";
    const std::string w = cg::ws(sink);
    const std::string id = sink.rule("call-id", R"("\"" [a-zA-Z0-9]{9} "\"")");
    const std::string json = cg::json_call(tools, sink, "name", "arguments", id);
    const std::string list =
        "\"[\" " + w + " " + cg::one_or_more(json, "\",\" " + w, req.parallel) + " " + w + " \"]\"";
    std::string named;
    for (const auto& t : tools) {
      named += (named.empty() ? "" : " | ") + cg::literal(t.name) + " " + cg::literal(kArgs) + " " +
               t.arguments;
    }
    const std::string named_rule = sink.rule("named-call", named);
    const std::string calls = cg::literal(kCalls);
    return calls + " (" + list + " | " + cg::one_or_more(named_rule, calls, req.parallel) + ")";
  }

 private:
  // Splits a leading [THINK] block; returns where the rest starts, or kWait.
  static size_t take_reasoning(std::string_view text, bool final, std::string& reasoning) {
    size_t s = json::skip_ws(text, 0);
    std::string_view t = text.substr(s);
    if (!starts_with(t, kThink)) return !final && starts_with(kThink, t) ? kWait : 0;
    std::string_view body = t.substr(kThink.size());
    size_t close = body.find(kEndThink);
    if (close == std::string_view::npos) {
      if (!final) body = body.substr(0, partial_marker_start(body, kEndThink));
      reasoning = std::string(trim(body));
      return kWait;
    }
    reasoning = std::string(trim(body.substr(0, close)));
    return json::skip_ws(text, s + kThink.size() + close + kEndThink.size());
  }

  // The calls after the [TOOL_CALLS] at `start`; returns where parsing goes on, or kWait.
  static size_t take_calls(std::string_view text, size_t start, bool final, OutputBuilder& out) {
    size_t i = json::skip_ws(text, start + kCalls.size());
    if (i < text.size() && text[i] == '[') {
      json::CallList list = json::scan_call_list(text, i, {.id = "id"}, /*need_id=*/true);
      if (list.status == json::Status::complete || !final) {
        for (size_t k = 0; k < list.calls.size(); ++k)
          out.add_call(list.calls[k], k + 1 == list.calls.size() && list.last_open);
        if (list.status == json::Status::complete) return list.end;
        return kWait;
      }
    } else if (i < text.size() || !final) {
      size_t next = take_named_call(text, i, final, out);
      if (next != 0) return next;
    }
    if (final) out.add_content(text.substr(start));  // malformed: raw, to the end
    return kWait;
  }

  // name[ARGS]{...} or name[CALL_ID]id[ARGS]{...} at `i`; returns where parsing goes on,
  // kWait, or 0 when malformed.
  static size_t take_named_call(std::string_view text, size_t i, bool final, OutputBuilder& out) {
    size_t bracket = text.find('[', i);
    std::string_view name = text.substr(i, bracket == std::string_view::npos ? kWait : bracket - i);
    if (bracket == std::string_view::npos)
      return !final && (name.empty() || is_name(name)) ? kWait : 0;
    if (!is_name(name)) return 0;
    std::string id;
    size_t args = bracket;
    std::string_view rest = text.substr(bracket);
    if (starts_with(rest, kCallId)) {
      size_t id_end = text.find('[', bracket + kCallId.size());
      if (id_end == std::string_view::npos) return final ? 0 : kWait;
      id = std::string(text.substr(bracket + kCallId.size(), id_end - bracket - kCallId.size()));
      if (!is_name(id)) return 0;
      args = id_end;
      rest = text.substr(id_end);
    }
    if (!starts_with(rest, kArgs)) {
      bool may_be = starts_with(kArgs, rest) || (id.empty() && starts_with(kCallId, rest));
      return !final && may_be ? kWait : 0;
    }
    size_t a = json::skip_ws(text, args + kArgs.size());
    if (a < text.size() && text[a] != '{') return 0;
    json::Scan v = json::scan_value(text, a);
    std::string arguments(text.substr(a, v.end - a));
    if (v.status == json::Status::complete) {
      if (!json::is_object(arguments)) return 0;
      out.add_call({id, std::string(name), arguments});
      return v.end;
    }
    if (final) return 0;
    out.add_call({id, std::string(name), arguments}, true);
    return kWait;
  }
};

}  // namespace

std::unique_ptr<OutputFormat> make_mistral_format() {
  return std::make_unique<MistralFormat>();
}

}  // namespace baton::toolcall
