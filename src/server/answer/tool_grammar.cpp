#include "server/answer/tool_grammar.h"

#include "grammar/json_schema.h"
#include "toolcall/call_grammar.h"
#include "util/log.h"

namespace baton::server {
namespace {

class SchemaSink : public toolcall::GrammarSink {
 public:
  explicit SchemaSink(grammar::SchemaGrammarBuilder& b) : b_(b) {}
  // A tool whose parameters use a keyword that no grammar enforces still gets a valid call:
  // its arguments are then any JSON object (agents send such tools on every request, and a
  // forced call must not fail for a "format": "uri" in one of them).
  std::string json_value(const nlohmann::ordered_json& schema, std::string_view hint) override {
    try {
      return b_.add_schema(schema, hint);
    } catch (const grammar::GrammarError& e) {
      // A single parameter (formats that write each one as text) keeps its type.
      if (schema.is_object() && schema.contains("type") && schema["type"] != "object") {
        try {
          auto typed = b_.add_schema({{"type", schema["type"]}}, hint);
          log::info("tool value '{}': constrained to its type only: {}", hint, e.what());
          return typed;
        } catch (const grammar::GrammarError&) {
        }
      }
      log::info("tool '{}': arguments constrained to any JSON object: {}", hint, e.what());
      return b_.add_schema({{"type", "object"}, {"additionalProperties", true}}, hint);
    }
  }
  std::string rule(std::string_view hint, std::string_view body) override {
    return b_.add_rule(hint, body);
  }

 private:
  grammar::SchemaGrammarBuilder& b_;
};

// A prompt that ended inside a reasoning block (the template opened <think>) lets the model
// finish its thinking first. Otherwise the call starts at once: an optional block would let a
// model that never thinks wander into "<think>" and write text until max_tokens. Thinking text
// cannot hold the close tag; "<" followed by anything but "/" keeps that simple and still lets
// the model write most text (a subset is enough: the grammar must only be sound).
std::string reasoning_prefix(const toolcall::ReasoningOptions& r,
                             grammar::SchemaGrammarBuilder& b) {
  if (!r.enabled || !r.starts_open || r.close.empty()) return "";
  const std::string text = b.add_rule("think-text", R"(([^<] | "<" [^/])*)");
  return text + " " + grammar::gbnf_literal(r.close) + " [ \\t\\n]{0,4} ";
}

// The whole grammar of the calls that `call` allows, after the reasoning prefix; "" when the
// format has no call grammar.
std::string call_gbnf(const toolcall::OutputFormat& format,
                      const toolcall::CallGrammarRequest& call,
                      const toolcall::ReasoningOptions& reasoning) {
  grammar::SchemaGrammarBuilder b;
  SchemaSink sink(b);
  const std::string calls = format.call_grammar(call, sink);
  if (calls.empty()) return "";
  return b.gbnf(reasoning_prefix(reasoning, b) + calls);
}

}  // namespace

std::string forced_call_gbnf(const toolcall::OutputFormat& format, const ChatFields& req,
                             const toolcall::ReasoningOptions& reasoning) {
  toolcall::CallGrammarRequest call;
  call.parallel = req.parallel_tool_calls;
  for (const auto& t : req.tools) {
    if (req.tool_choice != ToolChoice::Named ||
        t["function"].value("name", "") == req.tool_choice_name) {
      call.tools.push_back(t);
    }
  }
  return call_gbnf(format, call, reasoning);
}

std::string auto_call_gbnf(const toolcall::OutputFormat& format, const ChatFields& req) {
  if (format.call_trigger().empty()) return "";
  toolcall::CallGrammarRequest call;
  call.parallel = false;  // each call triggers anew
  call.tools = req.tools;
  toolcall::ReasoningOptions no_prefix;  // free text comes before the trigger anyway
  no_prefix.enabled = false;
  return call_gbnf(format, call, no_prefix);
}

}  // namespace baton::server
