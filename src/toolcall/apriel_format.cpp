// Apriel (ServiceNow, 1.5 and 1.6 Thinker): the model reasons first, in plain text, then writes
//   [BEGIN FINAL RESPONSE]\ncontent <tool_calls>[...]</tool_calls>\n[END FINAL RESPONSE]
// Apriel 1.5 starts its reasoning with "Here are my reasoning steps:"; Apriel 1.6's template
// writes that line into the prompt, so its text starts inside the reasoning with no marker.
// Rules, all decided from the text alone so that every parse only extends the previous one:
//  - text before [BEGIN FINAL RESPONSE] is reasoning (the lead line dropped);
//  - a <tool_calls> section before any [BEGIN FINAL RESPONSE] ends the reasoning when the text
//    began with the lead line, and otherwise shows that the model answered without reasoning
//    (as the template renders earlier turns): the text is content;
//  - until one of the markers comes, text that began with the lead line (or follows a prompt
//    that ends with it, as 1.6's does: FormatContext::prompt_tail) streams as reasoning; other
//    text is held back and, if generation ends first, is content.
#include "toolcall/format_factories.h"
#include "toolcall/json_call.h"
#include "toolcall/json_section_format.h"
#include "toolcall/markup_text.h"
#include "toolcall/output_builder.h"

namespace baton::toolcall {
namespace {

constexpr std::string_view kLead = "Here are my reasoning steps:";
constexpr std::string_view kFinal = "[BEGIN FINAL RESPONSE]";
constexpr std::string_view kCalls = "<tool_calls>";

class AprielFormat : public OutputFormat {
 public:
  explicit AprielFormat(bool prompt_led) : prompt_led_(prompt_led) {}
  std::string_view name() const override { return "apriel"; }
  std::vector<std::string> markers() const override { return calls_.markers(); }
  std::string call_trigger() const override { return std::string(kCalls); }
  // When the prompt left the model in its reasoning (1.6), it may reason first and open its
  // final response; the reasoning cannot hold "<t" or "[B", so it cannot open either early.
  std::string call_grammar(const CallGrammarRequest& req, GrammarSink& sink) const override {
    const std::string calls = calls_.call_grammar(req, sink);
    if (calls.empty() || !prompt_led_) return calls;
    const std::string thinking =
        sink.rule("apriel-reasoning", R"(([^<\[] | "<" [^t<\[] | "[" [^B<\[])*)");
    return "(" + thinking + " " + call_grammar::literal(kFinal) + " " + call_grammar::ws(sink) +
           ")? " + calls;
  }

  ParsedOutput parse(std::string_view text, bool final) const override {
    size_t s = json::skip_ws(text, 0);
    std::string_view t = text.substr(s);
    const bool text_led = t.substr(0, kLead.size()) == kLead;
    if (!prompt_led_ && !final && !text_led && kLead.substr(0, t.size()) == t) {
      return {};  // may become the lead
    }
    const bool led = prompt_led_ || text_led;
    size_t body = text_led ? s + kLead.size() : 0;
    size_t fin = text.find(kFinal);
    size_t calls = text.find(kCalls);
    if (fin != std::string_view::npos && fin < calls)
      return with_reasoning(text.substr(body, fin - body), text.substr(fin + kFinal.size()), final);
    if (calls != std::string_view::npos) {
      if (!led) return calls_.parse(text, final);
      return with_reasoning(text.substr(body, calls - body), text.substr(calls), final);
    }
    if (!led) return final ? calls_.parse(text, final) : ParsedOutput{};
    std::string_view thinking = text.substr(body);
    const std::vector<std::string> ends = {std::string(kFinal), std::string(kCalls)};
    ParsedOutput out;
    out.reasoning = std::string(
        markup::trim(thinking.substr(0, certain_end(thinking, thinking.size(), ends, final))));
    return out;
  }

 private:
  ParsedOutput with_reasoning(std::string_view reasoning, std::string_view rest, bool final) const {
    // Whitespace after the reasoning is layout, as after a <think> block.
    ParsedOutput out = calls_.parse(rest.substr(json::skip_ws(rest, 0)), final);
    out.reasoning = std::string(markup::trim(reasoning));
    return out;
  }

  JsonSectionFormat calls_{apriel_calls_spec()};
  bool prompt_led_;  // the prompt already wrote the lead line: the text starts in reasoning
};

}  // namespace

std::unique_ptr<OutputFormat> make_apriel_format(const FormatContext& ctx) {
  std::string_view tail = ctx.prompt_tail;
  while (!tail.empty() && json::skip_ws(tail, tail.size() - 1) == tail.size())
    tail.remove_suffix(1);
  return std::make_unique<AprielFormat>(tail.ends_with(kLead));
}

}  // namespace baton::toolcall
