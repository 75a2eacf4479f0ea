#include "server/api/chat_schema.h"

#include <fmt/format.h>

#include <set>

#include "server/api/json_fields.h"
#include "server/errors.h"

namespace baton::server {

using ojson = RequestJson;

namespace {

using fields::find;
using fields::required_string;

// A message's content as one string: text parts are joined, other part types are refused.
std::string content_text(const ojson& content, const std::string& param) {
  if (content.is_null()) return "";
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) {
    throw bad_request(param + " must be a string or an array of content parts", param);
  }
  std::string text;
  for (const auto& part : content) {
    if (!part.is_object() || !part.contains("type") || !part["type"].is_string()) {
      throw bad_request(param + " parts must be objects with a string 'type'", param);
    }
    const auto& type = part["type"].get_ref<const std::string&>();
    if (type != "text" && type != "input_text") {
      throw bad_request(
          fmt::format("{}: content part type '{}' is not supported (only 'text')", param, type),
          param);
    }
    auto t = part.find("text");
    if (t == part.end() || !t->is_string()) {
      throw bad_request(param + " text parts need a string 'text'", param);
    }
    text += t->get<std::string>();
  }
  return text;
}

ojson parse_arguments(const ojson& args, const std::string& param, size_t& bytes) {
  if (args.is_object()) {
    bytes += args.dump().size();
    return args;
  }
  if (!args.is_string()) {
    throw bad_request(param + " must be a string of JSON (or an object)", param);
  }
  const auto& text = args.get_ref<const std::string&>();
  bytes += text.size();
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return ojson::object();
  ojson parsed = fields::json_text(text, param);
  if (parsed.is_discarded() || !parsed.is_object()) {
    throw bad_request(param + " is not a JSON object; send the arguments the model produced",
                      param);
  }
  return parsed;
}

ojson parse_tool_calls(const ojson& calls, const std::string& where, size_t& bytes) {
  if (!calls.is_array()) throw bad_request(where + " must be an array", where);
  ojson out = ojson::array();
  for (size_t j = 0; j < calls.size(); ++j) {
    const ojson& c = calls[j];
    const std::string param = fmt::format("{}[{}]", where, j);
    if (!c.is_object()) throw bad_request(param + " must be an object", param);
    if (const ojson* t = find(c, "type"); t != nullptr && *t != "function") {
      throw bad_request(param + ".type must be \"function\"", param + ".type");
    }
    const ojson* fn = find(c, "function");
    if (fn == nullptr || !fn->is_object()) {
      throw bad_request(param + ".function must be an object", param + ".function");
    }
    std::string name = required_string(*fn, "name", param + ".function");
    const ojson* args = find(*fn, "arguments");
    ojson arguments = args == nullptr
                          ? ojson::object()
                          : parse_arguments(*args, param + ".function.arguments", bytes);
    ojson call = ojson::object();
    if (const ojson* id = find(c, "id")) {
      if (!id->is_string()) throw bad_request(param + ".id must be a string", param + ".id");
      call["id"] = *id;
    }
    call["type"] = "function";
    call["function"] = {{"name", std::move(name)}, {"arguments", std::move(arguments)}};
    out.push_back(std::move(call));
  }
  return out;
}

ojson parse_message(const ojson& m, size_t i, size_t& bytes) {
  const std::string param = fmt::format("messages[{}]", i);
  if (!m.is_object()) throw bad_request(param + " must be an object", param);
  const ojson* role = find(m, "role");
  if (role == nullptr || !role->is_string()) {
    throw bad_request(param + ".role must be a string", param + ".role");
  }
  const std::string r = role->get<std::string>();
  static const std::set<std::string> kRoles = {"system", "developer", "user", "assistant", "tool"};
  if (kRoles.count(r) == 0) {
    throw bad_request(fmt::format("{}.role '{}' is not one of system, developer, user, "
                                  "assistant, tool",
                                  param, r),
                      param + ".role");
  }
  ojson out = ojson::object();
  out["role"] = r;
  auto content = m.find("content");
  std::string text = content == m.end() ? "" : content_text(*content, param + ".content");
  bytes += text.size();
  out["content"] = std::move(text);
  if (const ojson* name = find(m, "name"); name != nullptr && name->is_string()) {
    out["name"] = *name;
  }
  if (r == "assistant") {
    if (const ojson* rc = find(m, "reasoning_content"); rc != nullptr && rc->is_string()) {
      bytes += rc->get_ref<const std::string&>().size();
      out["reasoning_content"] = *rc;
    }
    if (const ojson* calls = find(m, "tool_calls"); calls != nullptr && !calls->empty()) {
      out["tool_calls"] = parse_tool_calls(*calls, param + ".tool_calls", bytes);
    }
  }
  if (r == "tool") {
    if (const ojson* id = find(m, "tool_call_id")) {
      if (!id->is_string()) {
        throw bad_request(param + ".tool_call_id must be a string", param + ".tool_call_id");
      }
      out["tool_call_id"] = *id;
    }
  }
  return out;
}

ojson parse_messages(const ojson& body, size_t& bytes) {
  const ojson* msgs = find(body, "messages");
  if (msgs == nullptr) throw bad_request("'messages' is required", "messages");
  if (!msgs->is_array()) throw bad_request("'messages' must be an array", "messages");
  if (msgs->empty()) throw bad_request("'messages' must not be empty", "messages");
  ojson out = ojson::array();
  for (size_t i = 0; i < msgs->size(); ++i) out.push_back(parse_message((*msgs)[i], i, bytes));
  return out;
}

bool valid_function_name(const std::string& name) {
  if (name.empty() || name.size() > 128) return false;
  for (unsigned char c : name) {
    if (!(std::isalnum(c) || c == '_' || c == '-' || c == '.' || c == ':')) return false;
  }
  return true;
}

ojson parse_tools(const ojson& body, size_t& bytes) {
  const ojson* tools = find(body, "tools");
  if (tools == nullptr) return ojson::array();
  if (!tools->is_array()) throw bad_request("'tools' must be an array", "tools");
  std::set<std::string> names;
  for (size_t i = 0; i < tools->size(); ++i) {
    const ojson& t = (*tools)[i];
    const std::string param = fmt::format("tools[{}]", i);
    if (!t.is_object()) throw bad_request(param + " must be an object", param);
    if (!t.contains("type") || t["type"] != "function") {
      throw bad_request(param + ".type must be \"function\" (the only tool type served here)",
                        param + ".type");
    }
    const ojson* fn = find(t, "function");
    if (fn == nullptr || !fn->is_object()) {
      throw bad_request(param + ".function must be an object", param + ".function");
    }
    std::string name = required_string(*fn, "name", param + ".function");
    if (!valid_function_name(name)) {
      throw bad_request(fmt::format("{}.function.name '{}' must be 1-128 letters, digits, "
                                    "'_', '-', '.' or ':'",
                                    param, name.substr(0, 64)),
                        param + ".function.name");
    }
    if (!names.insert(name).second) {
      throw bad_request(fmt::format("{}: a second tool named '{}'", param, name),
                        param + ".function.name");
    }
    if (const ojson* p = find(*fn, "parameters"); p != nullptr && !p->is_object()) {
      throw bad_request(param + ".function.parameters must be a JSON schema object",
                        param + ".function.parameters");
    }
  }
  bytes += tools->dump().size();
  return *tools;
}

void parse_tool_choice(const ojson& body, ChatFields& out) {
  const ojson* tc = find(body, "tool_choice");
  if (tc == nullptr) return;
  if (tc->is_string()) {
    const auto& s = tc->get_ref<const std::string&>();
    if (s == "auto") return;
    if (s == "none") {
      out.tool_choice = ToolChoice::None;
      return;
    }
    if (s == "required") {
      if (out.tools.empty()) {
        throw bad_request("tool_choice \"required\" needs 'tools'", "tool_choice");
      }
      out.tool_choice = ToolChoice::Required;
      return;
    }
    throw bad_request(fmt::format("tool_choice '{}' is not one of none, auto, required, or "
                                  "{{\"type\": \"function\", \"function\": {{\"name\": ...}}}}",
                                  s.substr(0, 64)),
                      "tool_choice");
  }
  const ojson* fn = tc->is_object() ? find(*tc, "function") : nullptr;
  if (fn == nullptr || !fn->is_object()) {
    throw bad_request(
        "tool_choice must be a string or {\"type\": \"function\", \"function\": "
        "{\"name\": ...}}, got " +
            fields::type_name(tc->type()),
        "tool_choice");
  }
  std::string name = required_string(*fn, "name", "tool_choice.function");
  bool known = false;
  for (const auto& t : out.tools) known = known || t["function"]["name"] == name;
  if (!known) {
    throw bad_request(
        fmt::format("tool_choice names '{}', which is not in 'tools'", name.substr(0, 64)),
        "tool_choice");
  }
  out.tool_choice = ToolChoice::Named;
  out.tool_choice_name = std::move(name);
}

}  // namespace

ChatFields parse_chat_fields(const ojson& body) {
  ChatFields out;
  out.messages = parse_messages(body, out.text_bytes);
  out.tools = parse_tools(body, out.text_bytes);
  parse_tool_choice(body, out);
  if (const ojson* p = find(body, "parallel_tool_calls")) {
    if (!p->is_boolean()) {
      throw bad_request("'parallel_tool_calls' must be a boolean", "parallel_tool_calls");
    }
    out.parallel_tool_calls = p->get<bool>();
  }
  if (const ojson* k = find(body, "chat_template_kwargs")) {
    if (!k->is_object()) {
      throw bad_request("'chat_template_kwargs' must be an object of template variables",
                        "chat_template_kwargs");
    }
    out.template_kwargs = *k;
  }
  return out;
}

}  // namespace baton::server
