#include "server/api/anthropic_messages.h"

#include <fmt/format.h>

#include "server/api/json_fields.h"
#include "server/errors.h"

namespace baton::server::anthropic {

using fields::find;
using fields::required_string;

std::string type_of(const ojson& block) {
  const ojson* t = block.is_object() ? find(block, "type") : nullptr;
  return t != nullptr && t->is_string() ? t->get<std::string>() : "";
}

namespace {

// An image inside a tool's result (a screenshot, an image file read by an agent) becomes this
// note instead of failing the conversation: the model can carry on and tell the user.
constexpr const char* kImageOmitted = "[image omitted: this model does not read images]";

// Where a content block appears; decides which block types are allowed.
enum class Where { System, User, ToolResult, Assistant };

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

}  // namespace

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

}  // namespace baton::server::anthropic
