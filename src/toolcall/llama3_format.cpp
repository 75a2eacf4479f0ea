// Llama 3.1 / 3.2 / 3.3 JSON tool calls: the message is the call itself, maybe after the
// <|python_tag|> token, and several calls are separated by ';':
//   {"name": "get_weather", "parameters": {"city": "Paris"}}
// Without the tag, only a message that starts with '{' can be a call (JSON further into prose
// is content). An object that turns out not to be a call (no "name", bad JSON) is content.
#include <fmt/format.h>

#include "toolcall/format_factories.h"
#include "toolcall/json_call_list.h"
#include "toolcall/output_builder.h"

namespace baton::toolcall {
namespace {

constexpr std::string_view kTag = "<|python_tag|>";

class Llama3Format : public OutputFormat {
 public:
  std::string_view name() const override { return "llama3"; }
  std::vector<std::string> markers() const override { return {std::string(kTag)}; }

  ParsedOutput parse(std::string_view text, bool final) const override {
    OutputBuilder out(final);
    size_t start = json::skip_ws(text, 0);
    // A message that opens with the call has no tag: a tag's text further on is inside the
    // call's strings (a control token sampled there) or after it.
    const bool opens_with_call = start < text.size() && text[start] == '{';
    size_t tag = opens_with_call ? std::string_view::npos : text.find(kTag);
    if (tag != std::string_view::npos) {
      out.add_content(text.substr(0, tag));
      start = tag + kTag.size();
    } else if (start >= text.size() || text[start] != '{') {
      const std::vector<std::string> tags = {std::string(kTag)};
      out.add_content(text.substr(0, certain_end(text, text.size(), tags, final)));
      return out.take();
    }
    take_calls(text, start, tag == std::string_view::npos ? start : tag, final, out);
    return out.take();
  }

  std::string call_trigger() const override { return std::string(kTag); }
  std::string call_grammar(const CallGrammarRequest& req, GrammarSink& sink) const override {
    namespace cg = call_grammar;
    const auto tools = cg::tools(req, sink);
    if (tools.empty()) return "";
    const std::string call = cg::json_call(tools, sink, "name", "parameters");
    return fmt::format("({})? {}", cg::literal(kTag),
                       cg::one_or_more(call, "\"; \"", req.parallel));
  }

 private:
  // `raw_from`: where the raw text starts if the first call turns out not to be one.
  static void take_calls(std::string_view text, size_t start, size_t raw_from, bool final,
                         OutputBuilder& out) {
    const json::CallKeys keys{
        .name = "name", .arguments = "parameters", .alt_arguments = "arguments"};
    size_t i = start;
    while (true) {
      json::CallScan c = json::scan_call(text, i, keys);
      if (c.status == json::Status::complete) {
        out.add_call({"", *c.name, c.arguments});
        size_t j = json::skip_ws(text, c.end);
        if (j < text.size() && (text[j] == ';' || text[j] == '{')) {
          i = text[j] == ';' ? j + 1 : j;
          continue;
        }
        out.add_content(text.substr(c.end));
        return;
      }
      if (!final && c.name) {
        out.add_call({"", *c.name, c.arguments}, true);
        return;
      }
      if (!final && c.status == json::Status::partial) return;
      // Not a call: it and everything after it is content, raw.
      out.add_content(text.substr(i == start ? raw_from : i));
      return;
    }
  }
};

constexpr std::string_view kFunctools = "functools[";

// Firefunction v2: optional content, then " functools[" and a JSON array of
// {"name": ..., "arguments": {...}} objects (no closing marker).
class FirefunctionFormat : public OutputFormat {
 public:
  std::string_view name() const override { return "firefunction"; }
  std::vector<std::string> markers() const override { return {std::string(kFunctools)}; }

  ParsedOutput parse(std::string_view text, bool final) const override {
    OutputBuilder out(final);
    const std::vector<std::string> opens = {std::string(kFunctools)};
    size_t start = text.find(kFunctools);
    if (start == std::string_view::npos) {
      out.add_content(text.substr(0, certain_end(text, text.size(), opens, final)));
      return out.take();
    }
    out.add_content(text.substr(0, start));
    size_t list_at = start + kFunctools.size() - 1;
    json::CallList list = json::scan_call_list(text, list_at, {}, /*need_id=*/false);
    if (list.status == json::Status::complete || !final) {
      for (size_t k = 0; k < list.calls.size(); ++k)
        out.add_call(list.calls[k], k + 1 == list.calls.size() && list.last_open);
      if (list.status == json::Status::complete) out.add_content(text.substr(list.end));
    } else {
      out.add_content(text.substr(start));  // malformed: raw, to the end
    }
    return out.take();
  }

  std::string call_trigger() const override { return std::string(kFunctools); }
  std::string call_grammar(const CallGrammarRequest& req, GrammarSink& sink) const override {
    namespace cg = call_grammar;
    const auto tools = cg::tools(req, sink);
    if (tools.empty()) return "";
    const std::string w = cg::ws(sink);
    const std::string call = cg::json_call(tools, sink, "name", "arguments");
    return "\" \"? " + cg::literal(kFunctools) + " " + w + " " +
           cg::one_or_more(call, "\",\" " + w, req.parallel) + " " + w + " \"]\"";
  }
};

}  // namespace

std::unique_ptr<OutputFormat> make_llama3_format() {
  return std::make_unique<Llama3Format>();
}

std::unique_ptr<OutputFormat> make_firefunction_format() {
  return std::make_unique<FirefunctionFormat>();
}

}  // namespace baton::toolcall
