#include "server/api/anthropic_request.h"

#include <fmt/format.h>

#include <optional>

#include "server/answer/stop_set.h"
#include "server/api/anthropic_messages.h"
#include "server/api/json_fields.h"
#include "server/api/sampling_fields.h"
#include "server/errors.h"
#include "util/log.h"

namespace baton::server {

using ojson = RequestJson;
using anthropic::translate_messages;
using anthropic::Translation;
using anthropic::type_of;

namespace {

// The same bound as chat's `stop` (openai_request.cpp): every stop string is matched against
// each generated token, so their number is kept small.
constexpr size_t kMaxStopSequences = 4;

using fields::find;
using fields::required_string;

// Custom tools as function tools. A tool with another `type` (web_search_20250305,
// bash_20250124, text_editor_20250728, ...) is Anthropic's own, with a schema only Claude knows
// and, for most, run on Anthropic's servers: it is left out of what the model sees.
ojson translate_tools(const ojson& body, Translation& t) {
  const ojson* tools = find(body, "tools");
  if (tools == nullptr) return ojson::array();
  if (!tools->is_array()) throw bad_request("'tools' must be an array", "tools");
  ojson out = ojson::array();
  for (size_t i = 0; i < tools->size(); ++i) {
    const ojson& tool = (*tools)[i];
    const std::string param = fmt::format("tools[{}]", i);
    if (!tool.is_object()) throw bad_request(param + " must be an object", param);
    if (const ojson* type = find(tool, "type"); type != nullptr && *type != "custom") {
      if (!type->is_string()) throw bad_request(param + ".type must be a string", param + ".type");
      t.dropped.insert("tool " + type->get<std::string>().substr(0, 64));
      continue;
    }
    ojson fn = {{"name", required_string(tool, "name", param)}};
    if (const ojson* d = find(tool, "description")) {
      if (!d->is_string()) {
        throw bad_request(param + ".description must be a string", param + ".description");
      }
      fn["description"] = *d;
    }
    const ojson* schema = find(tool, "input_schema");
    if (schema == nullptr || !schema->is_object()) {
      throw bad_request(param + ".input_schema must be a JSON schema object",
                        param + ".input_schema");
    }
    fn["parameters"] = *schema;
    out.push_back({{"type", "function"}, {"function", std::move(fn)}});
  }
  return out;
}

// Into chat completions' tool_choice and parallel_tool_calls.
void translate_tool_choice(const ojson& body, ojson& chat) {
  const ojson* tc = find(body, "tool_choice");
  if (tc == nullptr) return;
  if (!tc->is_object()) {
    throw bad_request("'tool_choice' must be an object such as {\"type\": \"auto\"}, got " +
                          fields::type_name(tc->type()),
                      "tool_choice");
  }
  const std::string& type = required_string(*tc, "type", "tool_choice");
  if (type == "auto" || type == "none") {
    chat["tool_choice"] = type;
  } else if (type == "any" || type == "tool") {
    if (chat["tools"].empty()) {
      throw bad_request(
          fmt::format("tool_choice \"{}\" needs at least one custom tool in 'tools'", type),
          "tool_choice");
    }
    if (type == "any") {
      chat["tool_choice"] = "required";
    } else {
      chat["tool_choice"] = {{"type", "function"},
                             {"function", {{"name", required_string(*tc, "name", "tool_choice")}}}};
    }
  } else {
    throw bad_request(fmt::format("tool_choice.type '{}' is not one of auto, any, tool, none",
                                  type.substr(0, 64)),
                      "tool_choice.type");
  }
  if (const ojson* d = find(*tc, "disable_parallel_tool_use")) {
    if (!d->is_boolean()) {
      throw bad_request("tool_choice.disable_parallel_tool_use must be a boolean",
                        "tool_choice.disable_parallel_tool_use");
    }
    chat["parallel_tool_calls"] = !d->get<bool>();
  }
}

// Qwen-style templates switch thinking with the `enable_thinking` variable. budget_tokens is
// checked as Anthropic does but not enforced: the engine has no separate thinking budget, only
// max_tokens. Without `thinking` the template's (or --chat-template-kwargs') default holds.
void translate_thinking(const ojson& body, ojson& chat) {
  const ojson* th = find(body, "thinking");
  if (th == nullptr) return;
  if (!th->is_object()) {
    throw bad_request(
        "'thinking' must be {\"type\": \"enabled\", \"budget_tokens\": N} or "
        "{\"type\": \"disabled\"}",
        "thinking");
  }
  const std::string& type = required_string(*th, "type", "thinking");
  bool on = true;
  if (type == "enabled") {
    const ojson* b = find(*th, "budget_tokens");
    if (b == nullptr || !b->is_number_integer() || b->get<int64_t>() < 1024) {
      throw bad_request("thinking.budget_tokens must be an integer of at least 1024",
                        "thinking.budget_tokens");
    }
  } else if (type == "disabled") {
    on = false;
  } else if (type != "adaptive") {
    throw bad_request(fmt::format("thinking.type '{}' is not one of enabled, disabled, adaptive",
                                  type.substr(0, 64)),
                      "thinking.type");
  }
  chat["chat_template_kwargs"] = {{"enable_thinking", on}};
}

void parse_stop_sequences(const ojson& obj, CommonRequest& out) {
  auto it = obj.find("stop_sequences");
  if (it == obj.end() || it->is_null()) return;
  if (!it->is_array()) {
    throw bad_request("'stop_sequences' must be an array of strings, got " + fields::type_name(*it),
                      "stop_sequences");
  }
  if (it->size() > kMaxStopSequences) {
    throw bad_request(fmt::format("'stop_sequences' may hold at most {} strings on this server, "
                                  "got {}",
                                  kMaxStopSequences, it->size()),
                      "stop_sequences");
  }
  for (const auto& s : *it) {
    if (!s.is_string() || s.get_ref<const std::string&>().empty()) {
      throw bad_request("'stop_sequences' entries must be non-empty strings", "stop_sequences");
    }
    out.stop.push_back(s.get<std::string>());
  }
  check_stop_bytes(out.stop, "stop_sequences");
}

// max_tokens is required by Anthropic, and its clients ask for a lot (Claude Code: 32000). A
// value at or over this server's limit means "as much as you allow", so it is left unset: the
// answer then runs to --max-tokens-limit or to the end of the context, and stops with
// stop_reason "max_tokens" as it would have. Refusing it, as chat completions do, would make
// these clients unusable on a server with a smaller limit.
void parse_generation(const ojson& obj, const RequestLimits& limits, CommonRequest& out) {
  auto max = fields::integer(obj, "max_tokens", 1, INT32_MAX);
  if (!max) throw bad_request("'max_tokens' (an integer of at least 1) is required", "max_tokens");
  if (*max < limits.max_tokens_limit) out.max_tokens = static_cast<int32_t>(*max);
  if (auto v = fields::boolean(obj, "stream")) out.stream = *v;
  parse_basic_sampling(obj, kAnthropicSampling, out.sampling);
  parse_stop_sequences(obj, out);
  if (auto it = obj.find("metadata"); it != obj.end() && !it->is_null()) {
    if (!it->is_object()) throw bad_request("'metadata' must be an object", "metadata");
    if (auto u = it->find("user_id"); u != it->end() && !u->is_null()) {
      if (!u->is_string()) {
        throw bad_request("metadata.user_id must be a string", "metadata.user_id");
      }
      out.user = u->get<std::string>();
    }
  }
  if (auto v = fields::string(obj, "service_tier"); v && *v != "auto" && *v != "standard_only") {
    throw bad_request("'service_tier' must be \"auto\" or \"standard_only\"", "service_tier");
  }
}

// output_config.format {type: json_schema, schema} is Anthropic's structured output: the same
// constraint as chat's response_format json_schema. `effort` has no counterpart and is ignored.
void parse_output_config(const ojson& body, CommonRequest& out) {
  const ojson* oc = find(body, "output_config");
  if (oc == nullptr) return;
  if (!oc->is_object()) throw bad_request("'output_config' must be an object", "output_config");
  const ojson* f = find(*oc, "format");
  if (f == nullptr) return;
  const std::string param = "output_config.format";
  if (type_of(*f) != "json_schema") {
    throw bad_request(param + " must be {\"type\": \"json_schema\", \"schema\": {...}}", param);
  }
  const ojson* schema = find(*f, "schema");
  if (schema == nullptr || !schema->is_object()) {
    throw bad_request(param + ".schema must be a JSON schema object", param + ".schema");
  }
  out.constraint.kind = constraint::ConstraintSpec::Kind::JsonSchema;
  out.constraint.field = param;
  out.constraint.schema = *schema;
}

void check_unsupported(const ojson& obj) {
  if (auto it = obj.find("mcp_servers"); it != obj.end() && !it->is_null()) {
    if (!it->is_array() || !it->empty()) {
      throw bad_request(
          "'mcp_servers' is not supported: this server connects to no MCP server; "
          "run the tools in the client and send them as 'tools'",
          "mcp_servers");
    }
  }
  // `container` (code execution), `cache_control`, `inference_geo` and beta fields are
  // accepted and ignored: nothing here runs code, and the prefix cache needs no breakpoints.
}

void log_dropped(const Translation& t) {
  if (t.dropped.empty()) return;
  std::string list;
  for (const auto& d : t.dropped) list += (list.empty() ? "" : ", ") + d;
  log::info("anthropic messages: left out what this server does not serve: {}", list);
}

MessagesRequest translate(const std::string& body, const RequestLimits& limits, bool generate) {
  const ojson obj = parse_json_object(body, limits.max_array_items, limits.ctx);
  MessagesRequest out;
  auto model = fields::string(obj, "model");
  if (!model) throw bad_request("'model' (a string) is required", "model");
  out.model = *model;
  if (generate) parse_generation(obj, limits, out.chat.common);
  check_unsupported(obj);
  Translation t;
  translate_messages(obj, t);
  ojson chat = ojson::object();
  chat["messages"] = std::move(t.messages);
  chat["tools"] = translate_tools(obj, t);
  translate_tool_choice(obj, chat);
  translate_thinking(obj, chat);
  log_dropped(t);
  out.chat.chat = parse_chat_fields(chat);
  if (generate) parse_output_config(obj, out.chat.common);
  const size_t bytes = out.chat.chat.text_bytes;
  if (limits.max_prompt_bytes > 0 && bytes > limits.max_prompt_bytes) {
    throw ApiError(400,
                   fmt::format("the prompt text is {} bytes, more than the context (--ctx) of {} "
                               "tokens can hold",
                               bytes, limits.ctx),
                   "messages", "invalid_request_error", "context_length_exceeded");
  }
  return out;
}

}  // namespace

// The served model answers whatever `model` an Anthropic client names: those clients are
// configured with Claude model names (Claude Code sends "claude-sonnet-4-5" and switches to a
// "haiku" model for small tasks) and cannot easily be pointed at an arbitrary id, so checking
// the name would only lock them out. The name is echoed back, as Anthropic does.
MessagesRequest parse_messages_request(const std::string& body, const RequestLimits& limits) {
  return translate(body, limits, true);
}

MessagesRequest parse_count_tokens_request(const std::string& body, const RequestLimits& limits) {
  return translate(body, limits, false);
}

}  // namespace baton::server
