#include "server/api/anthropic_request.h"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <set>

#include "server/answer/stop_set.h"
#include "server/api/json_fields.h"
#include "server/api/sampling_fields.h"
#include "server/errors.h"
#include "util/log.h"

namespace baton::server {

using ojson = RequestJson;

namespace {

// The same bound as chat's `stop` (openai_request.cpp): every stop string is matched against
// each generated token, so their number is kept small.
constexpr size_t kMaxStopSequences = 4;

// An image inside a tool's result (a screenshot, an image file read by an agent) becomes this
// note instead of failing the conversation: the model can carry on and tell the user.
constexpr const char* kImageOmitted = "[image omitted: this model does not read images]";

// Where a content block appears; decides which block types are allowed.
enum class Where { System, User, ToolResult, Assistant };

// What the translation collects besides the messages.
struct Translation {
  ojson messages = ojson::array();
  std::map<std::string, std::string> tool_names;  // tool_use id → name, for the tool messages
  std::set<std::string> dropped;                  // left-out block and tool types, logged once
};

using fields::find;
using fields::required_string;

// A block's type, or "" when it has none (the block's reader then names the problem).
std::string type_of(const ojson& block) {
  const ojson* t = block.is_object() ? find(block, "type") : nullptr;
  return t != nullptr && t->is_string() ? t->get<std::string>() : "";
}

// Anthropic renders separate text blocks as separate paragraphs; joined without a break, the
// last word of one block would run into the first of the next.
void append_text(std::string& acc, const std::string& piece) {
  if (piece.empty()) return;
  if (!acc.empty()) acc += "\n\n";
  acc += piece;
}

// Blocks of tools that only Anthropic's servers run (web search, code execution, MCP
// connectors, ...): they come from a conversation begun elsewhere, and nothing here could
// continue them, so they are left out rather than refused.
bool server_tool_block(const std::string& type) {
  if (type == "server_tool_use" || type == "mcp_tool_use" || type == "mcp_tool_result" ||
      type == "container_upload" || type == "tool_reference") {
    return true;
  }
  return type != "tool_result" && type.ends_with("_tool_result");
}

std::string blocks_text(const ojson& content, const std::string& param, Where where,
                        Translation& t);

// A document's text: only text sources are read; a PDF or a URL is refused, as images are,
// since the model would otherwise answer as if it had read it.
std::string document_text(const ojson& block, const std::string& param, Translation& t) {
  const ojson* src = find(block, "source");
  if (src == nullptr || !src->is_object()) {
    throw bad_request(param + ".source must be an object", param + ".source");
  }
  const std::string& kind = required_string(*src, "type", param + ".source");
  std::string text;
  if (kind == "text") {
    text = required_string(*src, "data", param + ".source");
  } else if (kind == "content") {
    const ojson* c = find(*src, "content");
    if (c == nullptr) {
      throw bad_request(param + ".source.content is required", param + ".source.content");
    }
    text = blocks_text(*c, param + ".source.content", Where::ToolResult, t);
  } else {
    throw bad_request(fmt::format("{}: documents of source type '{}' are not supported; send the "
                                  "document's text (source type \"text\" or \"content\")",
                                  param, kind.substr(0, 64)),
                      param + ".source.type");
  }
  if (const ojson* title = find(block, "title"); title != nullptr && title->is_string()) {
    text = title->get<std::string>() + "\n\n" + text;
  }
  return text;
}

std::string search_result_text(const ojson& block, const std::string& param, Translation& t) {
  const std::string& title = required_string(block, "title", param);
  const std::string& source = required_string(block, "source", param);
  const ojson* c = find(block, "content");
  if (c == nullptr) throw bad_request(param + ".content is required", param + ".content");
  return fmt::format("{} ({})\n{}", title, source,
                     blocks_text(*c, param + ".content", Where::ToolResult, t));
}

// The text one block contributes, or nothing when it is left out. tool_use, tool_result and
// thinking blocks are read by the turn translators before this is called.
std::optional<std::string> block_text(const ojson& block, const std::string& param, Where where,
                                      Translation& t) {
  if (!block.is_object()) throw bad_request(param + " must be a content block object", param);
  const std::string& type = required_string(block, "type", param);
  if (type == "text") return required_string(block, "text", param);
  const bool user_side = where == Where::User || where == Where::ToolResult;
  if (type == "image") {
    if (where == Where::ToolResult) {
      t.dropped.insert("image (in a tool result)");
      return kImageOmitted;
    }
    throw bad_request(param + ": images are not supported: this server's model reads text only",
                      param);
  }
  if (type == "document" && user_side) return document_text(block, param, t);
  if (type == "search_result" && user_side) return search_result_text(block, param, t);
  if (server_tool_block(type) && where != Where::System) {
    t.dropped.insert(type);
    return std::nullopt;
  }
  if (where == Where::System) {
    throw bad_request(
        fmt::format("{}: system blocks must be text, got '{}'", param, type.substr(0, 64)),
        param + ".type");
  }
  throw bad_request(
      fmt::format("{}: content block type '{}' is not supported {}", param, type.substr(0, 64),
                  where == Where::Assistant
                      ? "in assistant turns (text, thinking, redacted_thinking, "
                        "tool_use)"
                      : "in user turns (text, image in tool results, document, "
                        "search_result, tool_result)"),
      param + ".type");
}

// A string, or an array of blocks whose texts are joined.
std::string blocks_text(const ojson& content, const std::string& param, Where where,
                        Translation& t) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) {
    throw bad_request(param + " must be a string or an array of content blocks", param);
  }
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    if (auto s = block_text(content[i], fmt::format("{}[{}]", param, i), where, t)) {
      append_text(text, *s);
    }
  }
  return text;
}

// Anthropic combines consecutive turns of one role; many templates refuse them ("roles must
// alternate"), so they are merged here.
void push_message(Translation& t, ojson m) {
  if (!t.messages.empty() && m["role"] != "tool" && t.messages.back()["role"] == m["role"]) {
    ojson& last = t.messages.back();
    std::string content = last["content"].get<std::string>();
    append_text(content, m["content"].get<std::string>());
    last["content"] = std::move(content);
    if (m.contains("reasoning_content")) {
      std::string r = last.value("reasoning_content", "");
      append_text(r, m["reasoning_content"].get<std::string>());
      last["reasoning_content"] = std::move(r);
    }
    if (m.contains("tool_calls")) {
      if (!last.contains("tool_calls")) last["tool_calls"] = ojson::array();
      for (auto& c : m["tool_calls"]) last["tool_calls"].push_back(std::move(c));
    }
    return;
  }
  t.messages.push_back(std::move(m));
}

ojson tool_message(const ojson& block, const std::string& param, Translation& t) {
  const std::string& id = required_string(block, "tool_use_id", param);
  std::string text;
  if (const ojson* c = find(block, "content")) {
    text = blocks_text(*c, param + ".content", Where::ToolResult, t);
  }
  if (const ojson* e = find(block, "is_error")) {
    if (!e->is_boolean()) {
      throw bad_request(param + ".is_error must be a boolean", param + ".is_error");
    }
    // Chat templates have no field for a failed call: the model learns it from the text.
    if (e->get<bool>()) text = "Error: " + text;
  }
  ojson m = {{"role", "tool"}, {"tool_call_id", id}, {"content", std::move(text)}};
  // Some templates label a tool's answer with the tool's name (chat completions' `name`).
  if (auto it = t.tool_names.find(id); it != t.tool_names.end()) m["name"] = it->second;
  return m;
}

// Tool results first, in order, then the turn's other content as one user message.
void user_turn(const ojson& content, const std::string& param, Translation& t) {
  if (!content.is_array()) {
    push_message(t, {{"role", "user"}, {"content", blocks_text(content, param, Where::User, t)}});
    return;
  }
  std::string text;
  bool results = false;
  for (size_t i = 0; i < content.size(); ++i) {
    const ojson& b = content[i];
    const std::string p = fmt::format("{}[{}]", param, i);
    if (type_of(b) == "tool_result") {
      push_message(t, tool_message(b, p, t));
      results = true;
    } else if (auto s = block_text(b, p, Where::User, t)) {
      append_text(text, *s);
    }
  }
  if (!text.empty() || !results) push_message(t, {{"role", "user"}, {"content", text}});
}

ojson tool_call(const ojson& block, const std::string& param, Translation& t) {
  const std::string& id = required_string(block, "id", param);
  const std::string& name = required_string(block, "name", param);
  const ojson* input = find(block, "input");
  if (input != nullptr && !input->is_object()) {
    throw bad_request(param + ".input must be an object (the tool's arguments)", param + ".input");
  }
  t.tool_names[id] = name;
  return {{"id", id},
          {"type", "function"},
          {"function", {{"name", name}, {"arguments", input ? *input : ojson::object()}}}};
}

void assistant_turn(const ojson& content, const std::string& param, Translation& t) {
  if (!content.is_array()) {
    push_message(
        t, {{"role", "assistant"}, {"content", blocks_text(content, param, Where::Assistant, t)}});
    return;
  }
  std::string text, reasoning;
  ojson calls = ojson::array();
  for (size_t i = 0; i < content.size(); ++i) {
    const ojson& b = content[i];
    const std::string p = fmt::format("{}[{}]", param, i);
    const std::string type = type_of(b);
    if (type == "tool_use") {
      calls.push_back(tool_call(b, p, t));
    } else if (type == "thinking") {
      append_text(reasoning, required_string(b, "thinking", p));  // the signature is not checked
    } else if (type == "redacted_thinking") {
      t.dropped.insert(type);  // encrypted by Anthropic: nothing a model here could read
    } else if (auto s = block_text(b, p, Where::Assistant, t)) {
      append_text(text, *s);
    }
  }
  ojson m = {{"role", "assistant"}, {"content", std::move(text)}};
  if (!reasoning.empty()) m["reasoning_content"] = std::move(reasoning);
  if (!calls.empty()) m["tool_calls"] = std::move(calls);
  push_message(t, std::move(m));
}

void system_turn(const ojson& body, Translation& t) {
  const ojson* s = find(body, "system");
  if (s == nullptr) return;
  if (!s->is_string() && !s->is_array()) {
    throw bad_request(
        "'system' must be a string or an array of text blocks, got " + fields::type_name(s->type()),
        "system");
  }
  std::string text = blocks_text(*s, "system", Where::System, t);
  if (!text.empty()) push_message(t, {{"role", "system"}, {"content", std::move(text)}});
}

void translate_messages(const ojson& body, Translation& t) {
  system_turn(body, t);
  const ojson* msgs = find(body, "messages");
  if (msgs == nullptr) throw bad_request("'messages' is required", "messages");
  if (!msgs->is_array()) throw bad_request("'messages' must be an array", "messages");
  if (msgs->empty()) throw bad_request("'messages' must hold at least one message", "messages");
  for (size_t i = 0; i < msgs->size(); ++i) {
    const ojson& m = (*msgs)[i];
    const std::string param = fmt::format("messages[{}]", i);
    if (!m.is_object()) throw bad_request(param + " must be an object", param);
    const std::string& role = required_string(m, "role", param);
    const ojson* content = find(m, "content");
    if (content == nullptr || (!content->is_string() && !content->is_array())) {
      throw bad_request(param + ".content must be a string or an array of content blocks",
                        param + ".content");
    }
    if (role == "user") {
      user_turn(*content, param + ".content", t);
    } else if (role == "assistant") {
      assistant_turn(*content, param + ".content", t);
    } else if (role == "system") {  // in the SDKs' types, though not in the API reference
      push_message(t, {{"role", "system"},
                       {"content", blocks_text(*content, param + ".content", Where::System, t)}});
    } else {
      throw bad_request(
          fmt::format("{}.role '{}' is not \"user\" or \"assistant\"", param, role.substr(0, 64)),
          param + ".role");
    }
  }
}

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
