#include "server/api/responses_request.h"

#include <fmt/format.h>

#include <cctype>
#include <set>
#include <utility>
#include <vector>

#include "server/api/constraint_fields.h"
#include "server/api/json_fields.h"
#include "server/api/responses_tools.h"
#include "server/api/sampling_fields.h"
#include "server/errors.h"
#include "server/http/request_head.h"

namespace baton::server {

using nlohmann::json;
using ojson = RequestJson;

namespace {

using fields::find;
using fields::required_string;
using responses::ChatTools;
using responses::read_tool_choice;
using responses::read_tools;
using responses::ToolNames;

std::string optional_string(const ojson& obj, const char* key, const std::string& where) {
  return find(obj, key) == nullptr ? std::string() : required_string(obj, key, where);
}

// Content parts as one string: text parts joined. The model reads text only.
std::string parts_text(const ojson& content, const std::string& param) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) {
    throw bad_request(fmt::format("'{}' must be a string or an array of content parts, got {}",
                                  param, fields::type_name(content)),
                      param);
  }
  std::string text;
  for (size_t j = 0; j < content.size(); ++j) {
    const ojson& part = content[j];
    const std::string where = fmt::format("{}[{}]", param, j);
    if (!part.is_object()) throw bad_request(fmt::format("'{}' must be an object", where), where);
    const std::string type = required_string(part, "type", where);
    if (type == "input_text" || type == "output_text" || type == "text") {
      text += required_string(part, "text", where);
    } else if (type == "refusal") {
      text += required_string(part, "refusal", where);
    } else if (type == "input_image") {
      throw bad_request(fmt::format("'{}': images are not supported (the served model reads "
                                    "text only); send input_text parts",
                                    where),
                        where + ".type");
    } else if (type == "input_file" || type == "input_audio") {
      throw bad_request(fmt::format("'{}': {} parts are not supported; put the text itself in an "
                                    "input_text part",
                                    where, type),
                        where + ".type");
    } else {
      throw bad_request(fmt::format("'{}.type' '{}' is not a content part type (input_text, "
                                    "output_text)",
                                    where, type.substr(0, 64)),
                        where + ".type");
    }
  }
  return text;
}

// Chat messages from input items. Function calls join the assistant message they follow (one
// turn's calls are one message), reasoning goes to the next assistant message.
class InputReader {
 public:
  explicit InputReader(const ToolNames& names) : names_(names) {}

  void add(const ojson& item, size_t i) {
    const std::string where = fmt::format("input[{}]", i);
    if (!item.is_object()) {
      throw bad_request(
          fmt::format("'{}' must be an object, got {}", where, fields::type_name(item)), where);
    }
    const ojson* type = find(item, "type");
    if (type != nullptr && !type->is_string()) {
      throw bad_request(fmt::format("'{}.type' must be a string", where), where + ".type");
    }
    const std::string t = type == nullptr ? "message" : type->get<std::string>();
    if (t == "message") {
      add_message(item, where);
    } else if (t == "function_call") {
      add_call(item, where);
    } else if (t == "function_call_output") {
      add_output(item, where);
    } else if (t == "reasoning") {
      add_reasoning(item, where);
    } else if (t == "item_reference") {
      throw bad_request(fmt::format("'{}': items are not stored here, so references cannot be "
                                    "resolved; send the item itself",
                                    where),
                        where + ".type");
    } else {
      throw bad_request(fmt::format("'{}.type' '{}' is not supported here (message, "
                                    "function_call, function_call_output, reasoning)",
                                    where, t.substr(0, 64)),
                        where + ".type");
    }
  }

  // The Responses path each chat message came from (for renaming errors).
  const std::vector<std::string>& origins() const { return origins_; }
  ojson take() { return std::move(messages_); }
  void push_system(const std::string& text) { push({{"role", "system"}, {"content", text}}, ""); }

 private:
  void push(ojson msg, const std::string& where) {
    messages_.push_back(std::move(msg));
    origins_.push_back(where.empty() ? "instructions" : where);
  }

  void add_message(const ojson& item, const std::string& where) {
    const std::string role = required_string(item, "role", where);
    static const std::set<std::string> kRoles = {"user", "assistant", "system", "developer"};
    if (kRoles.count(role) == 0) {
      throw bad_request(fmt::format("'{}.role' '{}' is not one of user, assistant, system, "
                                    "developer",
                                    where, role.substr(0, 64)),
                        where + ".role");
    }
    const ojson* content = find(item, "content");
    if (content == nullptr) {
      throw bad_request(fmt::format("'{}.content' is required", where), where + ".content");
    }
    ojson msg = {{"role", role}, {"content", parts_text(*content, where + ".content")}};
    if (role == "assistant") {
      take_reasoning(msg);
      push(std::move(msg), where);
      calls_join_ = true;
      return;
    }
    reasoning_.clear();  // thinking that led to no answer has nothing to attach to
    push(std::move(msg), where);
    calls_join_ = false;
  }

  void add_call(const ojson& item, const std::string& where) {
    const std::string call_id = required_string(item, "call_id", where);
    const std::string name = required_string(item, "name", where);
    const std::string ns = optional_string(item, "namespace", where);
    const ojson* args = find(item, "arguments");
    if (args == nullptr) {
      throw bad_request(fmt::format("'{}.arguments' is required", where), where + ".arguments");
    }
    // Checked here so the error names the item; the chat parser reads them again.
    const bool object_text = args->is_string() && [&] {
      const auto& s = args->get_ref<const std::string&>();
      if (s.find_first_not_of(" \t\r\n") == std::string::npos) return true;
      ojson parsed = fields::json_text(s, where + ".arguments");
      return !parsed.is_discarded() && parsed.is_object();
    }();
    if (!object_text && !args->is_object()) {
      throw bad_request(fmt::format("'{}.arguments' must be a JSON object in a string (the "
                                    "arguments the model produced)",
                                    where),
                        where + ".arguments");
    }
    const std::string visible = names_.visible(ns, name);
    call_names_[call_id] = visible;
    ojson call = {{"id", call_id},
                  {"type", "function"},
                  {"function", {{"name", visible}, {"arguments", *args}}}};
    if (!calls_join_) {
      push({{"role", "assistant"}, {"content", ""}}, where);
      calls_join_ = true;
    }
    ojson& msg = messages_.back();
    take_reasoning(msg);
    if (!msg.contains("tool_calls")) msg["tool_calls"] = ojson::array();
    msg["tool_calls"].push_back(std::move(call));
  }

  void add_output(const ojson& item, const std::string& where) {
    const std::string call_id = required_string(item, "call_id", where);
    const ojson* output = find(item, "output");
    if (output == nullptr) {
      throw bad_request(fmt::format("'{}.output' is required", where), where + ".output");
    }
    ojson msg = {{"role", "tool"},
                 {"content", parts_text(*output, where + ".output")},
                 {"tool_call_id", call_id}};
    if (auto it = call_names_.find(call_id); it != call_names_.end()) msg["name"] = it->second;
    push(std::move(msg), where);
    calls_join_ = false;
  }

  void add_reasoning(const ojson& item, const std::string& where) {
    // The model's own text (content) when sent back, else its summary; encrypted_content is
    // another server's state and means nothing here.
    std::string text = reasoning_parts(item, "content", "reasoning_text", where);
    if (text.empty()) text = reasoning_parts(item, "summary", "summary_text", where);
    if (text.empty()) return;
    if (!reasoning_.empty()) reasoning_ += "\n\n";
    reasoning_ += text;
  }

  static std::string reasoning_parts(const ojson& item, const char* key, const char* part_type,
                                     const std::string& where) {
    const ojson* parts = find(item, key);
    if (parts == nullptr) return "";
    const std::string param = where + "." + key;
    if (!parts->is_array()) {
      throw bad_request(fmt::format("'{}' must be an array of {} parts", param, part_type), param);
    }
    std::string text;
    for (size_t j = 0; j < parts->size(); ++j) {
      const ojson& part = (*parts)[j];
      const std::string at = fmt::format("{}[{}]", param, j);
      if (!part.is_object()) throw bad_request(fmt::format("'{}' must be an object", at), at);
      const std::string piece = required_string(part, "text", at);
      if (piece.empty()) continue;
      if (!text.empty()) text += "\n\n";
      text += piece;
    }
    return text;
  }

  void take_reasoning(ojson& msg) {
    if (reasoning_.empty()) return;
    if (msg.contains("reasoning_content")) {
      msg["reasoning_content"] = msg["reasoning_content"].get<std::string>() + "\n\n" + reasoning_;
    } else {
      msg["reasoning_content"] = reasoning_;
    }
    reasoning_.clear();
  }

  const ToolNames& names_;
  ojson messages_ = ojson::array();
  std::vector<std::string> origins_;
  std::string reasoning_;    // from reasoning items, for the next assistant message
  bool calls_join_ = false;  // the last message is an assistant turn that calls may join
  std::map<std::string, std::string> call_names_;  // call_id → the function it called
};

// parse_chat_fields names chat-completions paths (messages[3], tools[2].function.name); the
// client sent input items and flat tools, so its errors are renamed to those.
class ErrorPaths {
 public:
  ErrorPaths(const std::vector<std::string>& messages, const std::vector<std::string>& tools)
      : messages_(messages), tools_(tools) {}

  ApiError rename(const ApiError& e) const {
    std::string message = e.what();
    std::string param = e.param;
    (void)(replace("messages", messages_, "", param, message) ||
           replace("tools", tools_, ".function", param, message) ||
           replace("tools", tools_, "", param, message));
    ApiError out(e.status, message, param, e.type, e.code);
    out.retry_after_s = e.retry_after_s;
    return out;
  }

 private:
  // `param` starting with "<list>[k]<inner>" → origins[k], in the param and in the message.
  static bool replace(const std::string& list, const std::vector<std::string>& origins,
                      const std::string& inner, std::string& param, std::string& message) {
    const std::string open = list + "[";
    if (param.rfind(open, 0) != 0) return false;
    size_t k = 0;
    size_t pos = open.size();
    for (; pos < param.size() && std::isdigit(static_cast<unsigned char>(param[pos])); ++pos) {
      k = k * 10 + static_cast<size_t>(param[pos] - '0');
      if (k > origins.size()) return false;
    }
    if (pos == open.size() || pos >= param.size() || param[pos] != ']' || k >= origins.size()) {
      return false;
    }
    const std::string element = param.substr(0, pos + 1);
    const std::string from = element + inner;
    if (param.compare(0, from.size(), from) != 0) return false;
    param.replace(0, from.size(), origins[k]);
    for (const std::string& old : {from, element}) {
      if (size_t at = message.find(old); at != std::string::npos) {
        message.replace(at, old.size(), origins[k]);
        break;
      }
    }
    return true;
  }

  const std::vector<std::string>& messages_;
  const std::vector<std::string>& tools_;
};

// Fields that ask for state this server does not keep.
void refuse_stored_state(const ojson& obj) {
  auto given = [&](const char* key) { return obj.contains(key) && !obj[key].is_null(); };
  if (given("previous_response_id")) {
    throw bad_request(
        "'previous_response_id': responses are not stored here; resend the "
        "conversation as input items (with store: false, as stateless clients do)",
        "previous_response_id");
  }
  if (given("conversation")) {
    throw bad_request(
        "'conversation': conversations are not stored here; send the whole "
        "conversation as input items",
        "conversation");
  }
  if (given("prompt")) {
    throw bad_request(
        "'prompt': stored prompt templates are not available here; send "
        "instructions and input instead",
        "prompt");
  }
  if (fields::boolean(obj, "background").value_or(false)) {
    throw bad_request(
        "'background': responses run only in the foreground here (nothing is "
        "stored to poll); omit it or set it to false",
        "background");
  }
  if (auto n = fields::integer(obj, "n", INT64_MIN, INT64_MAX); n && *n != 1) {
    throw bad_request(fmt::format("'n' must be 1: a response has one answer, got {}", *n), "n");
  }
}

void read_common(const ojson& obj, const RequestLimits& limits, CommonRequest& out) {
  if (auto v = fields::string(obj, "model")) out.model = *v;
  if (auto v = fields::boolean(obj, "stream")) out.stream = *v;
  if (auto v = fields::integer(obj, "max_output_tokens", 1, INT32_MAX)) {
    if (*v > limits.max_tokens_limit) {
      throw bad_request(fmt::format("'max_output_tokens' is {}, over this server's limit of {} "
                                    "(--max-tokens-limit)",
                                    *v, limits.max_tokens_limit),
                        "max_output_tokens");
    }
    out.max_tokens = static_cast<int32_t>(*v);
  }
  parse_basic_sampling(obj, kResponsesSampling, out.sampling);
  if (auto v = fields::string(obj, "user")) out.user = *v;
  if (auto v = fields::string(obj, "prompt_cache_key")) out.session = clean_session_key(*v);
  out.constraint = parse_text_format(obj);
}

// Accepted fields that change nothing here, checked for their types so a typo fails loudly.
void check_accepted(const ojson& obj) {
  for (const char* key :
       {"instructions", "safety_identifier", "service_tier", "prompt_cache_retention"}) {
    fields::string(obj, key);
  }
  fields::boolean(obj, "store");
  fields::integer(obj, "top_logprobs", 0, 20);
  fields::integer(obj, "max_tool_calls", 1, INT32_MAX);
  for (const char* key : {"metadata", "client_metadata", "stream_options", "reasoning"}) {
    if (obj.contains(key) && !obj[key].is_null() && !obj[key].is_object()) {
      throw bad_request(
          fmt::format("'{}' must be an object, got {}", key, fields::type_name(obj[key])), key);
    }
  }
  if (auto v = fields::string(obj, "truncation"); v && *v != "auto" && *v != "disabled") {
    throw bad_request("'truncation' must be \"auto\" or \"disabled\"", "truncation");
  }
  if (obj.contains("include") && !obj["include"].is_null()) {
    const ojson& inc = obj["include"];
    bool strings = inc.is_array();
    for (const auto& v : inc) strings = strings && v.is_string();
    if (!strings) throw bad_request("'include' must be an array of strings", "include");
  }
  if (obj.contains("reasoning") && obj["reasoning"].is_object()) {
    for (const char* key : {"effort", "summary", "generate_summary"}) {
      const ojson& r = obj["reasoning"];
      if (r.contains(key) && !r[key].is_null() && !r[key].is_string()) {
        throw bad_request(fmt::format("'reasoning.{}' must be a string", key),
                          std::string("reasoning.") + key);
      }
    }
  }
}

template <class Json>
json value_or(const Json& obj, const char* key, json fallback) {
  auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? fallback : json(*it);
}

// The request's settings as the response object repeats them. Nothing is stored (store: false
// whatever was asked), nothing is truncated to fit (truncation: disabled: a prompt over the
// context is refused), and there is one service tier.
json echo_settings(const ojson& obj) {
  json reasoning = value_or(obj, "reasoning", json::object());
  json text = value_or(obj, "text", json::object());
  if (!text.is_object()) text = json::object();
  if (!text.contains("format") || text["format"].is_null()) text["format"] = {{"type", "text"}};
  return {{"background", false},
          {"instructions", value_or(obj, "instructions", nullptr)},
          {"max_output_tokens", value_or(obj, "max_output_tokens", nullptr)},
          {"max_tool_calls", value_or(obj, "max_tool_calls", nullptr)},
          {"metadata", value_or(obj, "metadata", json::object())},
          {"parallel_tool_calls", value_or(obj, "parallel_tool_calls", true)},
          {"previous_response_id", nullptr},
          {"prompt_cache_key", value_or(obj, "prompt_cache_key", nullptr)},
          {"reasoning",
           {{"effort", value_or(reasoning, "effort", nullptr)},
            {"summary", value_or(reasoning, "summary", nullptr)}}},
          {"safety_identifier", value_or(obj, "safety_identifier", nullptr)},
          {"service_tier", "default"},
          {"store", false},
          {"temperature", value_or(obj, "temperature", nullptr)},
          {"text", text},
          {"tool_choice", value_or(obj, "tool_choice", "auto")},
          {"tools", value_or(obj, "tools", json::array())},
          {"top_logprobs", value_or(obj, "top_logprobs", 0)},
          {"top_p", value_or(obj, "top_p", nullptr)},
          {"truncation", "disabled"},
          {"user", value_or(obj, "user", nullptr)}};
}

ojson read_input(const ojson& body, InputReader& reader) {
  if (const ojson* instructions = find(body, "instructions")) {
    reader.push_system(instructions->get<std::string>());
  }
  const ojson* input = find(body, "input");
  if (input == nullptr) {
    throw bad_request("'input' is required: a string or an array of input items", "input");
  }
  if (input->is_string()) {
    ojson item = {{"role", "user"}, {"content", *input}};
    reader.add(item, 0);
  } else if (input->is_array()) {
    if (input->empty()) throw bad_request("'input' must not be empty", "input");
    for (size_t i = 0; i < input->size(); ++i) reader.add((*input)[i], i);
  } else {
    throw bad_request(fmt::format("'input' must be a string or an array of items, got {}",
                                  fields::type_name(*input)),
                      "input");
  }
  return reader.take();
}

}  // namespace

ResponsesRequest parse_responses_request(const std::string& body, const RequestLimits& limits) {
  const ojson obj = parse_json_object(body, limits.max_array_items, limits.ctx);
  refuse_stored_state(obj);
  check_accepted(obj);
  ResponsesRequest out;
  read_common(obj, limits, out.chat.common);
  ToolNames names;
  ChatTools tools = read_tools(obj, names);
  ojson chat_body = ojson::object();
  if (ojson tc = read_tool_choice(obj, tools, names); !tc.is_null()) {
    chat_body["tool_choice"] = std::move(tc);
  }
  InputReader reader(names);
  chat_body["messages"] = read_input(obj, reader);
  chat_body["tools"] = tools.tools;
  for (const char* key : {"parallel_tool_calls", "chat_template_kwargs"}) {
    if (const ojson* v = find(obj, key)) chat_body[key] = *v;
  }
  try {
    out.chat.chat = parse_chat_fields(chat_body);
  } catch (const ApiError& e) {
    throw ErrorPaths(reader.origins(), tools.origins).rename(e);
  }
  // gpt-oss style templates read the effort from this variable; others ignore it.
  if (const ojson* r = find(obj, "reasoning"); r != nullptr && find(*r, "effort") != nullptr) {
    auto& kwargs = out.chat.chat.template_kwargs;
    if (!kwargs.contains("reasoning_effort")) kwargs["reasoning_effort"] = (*r)["effort"];
  }
  check_prompt_bytes(out.chat.chat.text_bytes, limits, "input");
  out.echo.settings = echo_settings(obj);
  out.echo.namespaced = names.declared();
  return out;
}

}  // namespace baton::server
