#include "server/api/responses_writer.h"

#include <ctime>

#include "server/http/sse.h"

namespace baton::server {

using nlohmann::json;

namespace {

const char* part_type(bool reasoning) {
  return reasoning ? "reasoning_text" : "output_text";
}

json text_part(bool reasoning, const std::string& text) {
  json part = {{"type", part_type(reasoning)}, {"text", text}};
  if (!reasoning) {
    part["annotations"] = json::array();
    part["logprobs"] = json::array();
  }
  return part;
}

}  // namespace

json responses_usage_json(const Usage& u) {
  return {{"input_tokens", u.prompt_tokens},
          {"input_tokens_details", {{"cached_tokens", u.cached_tokens}}},
          {"output_tokens", u.completion_tokens},
          // The engine does not count thinking tokens apart from the answer's.
          {"output_tokens_details", {{"reasoning_tokens", 0}}},
          {"total_tokens", u.prompt_tokens + u.completion_tokens}};
}

ResponsesWriter::Item::Item(Kind k, std::string text_, std::string call_id_, std::string name_,
                            size_t call_index_)
    : kind(k),
      id(make_response_id(k == Kind::Reasoning ? "rs_"
                          : k == Kind::Message ? "msg_"
                                               : "fc_")),
      text(std::move(text_)),
      call_id(std::move(call_id_)),
      name(std::move(name_)),
      call_index(call_index_) {
  if (kind == Kind::Call && call_id.empty()) call_id = toolcall::make_call_id();
}

ResponsesWriter::ResponsesWriter(ResponseMeta meta, ResponsesEcho echo)
    : meta_(std::move(meta)), echo_(std::move(echo)) {}

std::string ResponsesWriter::event(const std::string& type, json body) {
  body["type"] = type;
  body["sequence_number"] = sequence_++;
  return sse_event(type, body);
}

json ResponsesWriter::item_json(const Item& item, bool added) const {
  const std::string& status = added ? std::string("in_progress") : item.status;
  switch (item.kind) {
    case Kind::Reasoning:
      return {{"id", item.id},
              {"type", "reasoning"},
              {"status", status},
              {"summary", json::array()},
              {"content", added ? json::array() : json::array({text_part(true, item.text)})}};
    case Kind::Message:
      return {{"id", item.id},
              {"type", "message"},
              {"role", "assistant"},
              {"status", status},
              {"content", added ? json::array() : json::array({text_part(false, item.text)})}};
    case Kind::Call:
      break;
  }
  json call = {{"id", item.id},     {"type", "function_call"},
               {"status", status},  {"call_id", item.call_id},
               {"name", item.name}, {"arguments", added ? std::string() : item.text}};
  // A function of a namespace tool: the client routes the call by namespace and name.
  if (auto it = echo_.namespaced.find(item.name); it != echo_.namespaced.end()) {
    call["name"] = it->second.name;
    call["namespace"] = it->second.ns;
  }
  return call;
}

std::string ResponsesWriter::add_item(Item item) {
  items_.push_back(std::move(item));
  const Item& it = items_.back();
  const size_t index = items_.size() - 1;
  std::string out =
      event("response.output_item.added", {{"output_index", index}, {"item", item_json(it, true)}});
  if (it.kind != Kind::Call) {
    out +=
        event("response.content_part.added", {{"item_id", it.id},
                                              {"output_index", index},
                                              {"content_index", 0},
                                              {"part", text_part(it.kind == Kind::Reasoning, "")}});
  }
  return out;
}

ResponsesWriter::Item& ResponsesWriter::open(Item fresh, std::string& out) {
  if (!items_.empty()) {
    Item& last = items_.back();
    if (!last.done && last.kind == fresh.kind &&
        (fresh.kind != Kind::Call || last.call_index == fresh.call_index)) {
      return last;
    }
  }
  out += close_open("completed");
  out += add_item(std::move(fresh));
  return items_.back();
}

std::string ResponsesWriter::close(Item& item, const std::string& status) {
  item.done = true;
  item.status = status;
  const size_t index = static_cast<size_t>(&item - items_.data());
  std::string out;
  if (item.kind == Kind::Call && item.text.empty()) {
    // A call without arguments still carries a JSON object: clients parse it.
    item.text = "{}";
    out += event("response.function_call_arguments.delta",
                 {{"item_id", item.id}, {"output_index", index}, {"delta", item.text}});
  }
  if (item.kind == Kind::Call) {
    out += event("response.function_call_arguments.done", {{"item_id", item.id},
                                                           {"output_index", index},
                                                           {"name", item_json(item, false)["name"]},
                                                           {"arguments", item.text}});
  } else {
    const bool reasoning = item.kind == Kind::Reasoning;
    json done = {
        {"item_id", item.id}, {"output_index", index}, {"content_index", 0}, {"text", item.text}};
    if (!reasoning) done["logprobs"] = json::array();
    out += event(reasoning ? "response.reasoning_text.done" : "response.output_text.done", done);
    out += event("response.content_part.done", {{"item_id", item.id},
                                                {"output_index", index},
                                                {"content_index", 0},
                                                {"part", text_part(reasoning, item.text)}});
  }
  out += event("response.output_item.done",
               {{"output_index", index}, {"item", item_json(item, false)}});
  return out;
}

std::string ResponsesWriter::close_open(const std::string& status) {
  if (items_.empty() || items_.back().done) return {};
  return close(items_.back(), status);
}

json ResponsesWriter::response_json(const std::string& status, const json& output) const {
  json r = echo_.settings;
  r["id"] = meta_.id;
  r["object"] = "response";
  r["created_at"] = meta_.created;
  r["status"] = status;
  r["model"] = meta_.model;
  r["output"] = output;
  r["error"] = nullptr;
  r["incomplete_details"] = nullptr;
  r["usage"] = nullptr;
  return r;
}

json ResponsesWriter::final_response(const std::string& engine_reason, const Usage& usage,
                                     const json& output) const {
  const bool cut = engine_reason == "length";
  json r = response_json(cut ? "incomplete" : "completed", output);
  if (cut) {
    r["incomplete_details"] = {{"reason", "max_output_tokens"}};
  } else {
    r["completed_at"] = static_cast<int64_t>(std::time(nullptr));
  }
  r["usage"] = responses_usage_json(usage);
  return r;
}

std::string ResponsesWriter::stream_start() {
  const json r = response_json("in_progress", json::array());
  std::string out = event("response.created", {{"response", r}});
  out += event("response.in_progress", {{"response", r}});
  return out;
}

std::string ResponsesWriter::stream_delta(size_t index, const toolcall::OutputDelta& d,
                                          const std::vector<TokenLogprob>&) {
  if (index != 0) return {};
  std::string out;
  if (!d.reasoning.empty()) {
    Item& it = open(Item(Kind::Reasoning), out);
    it.text += d.reasoning;
    out += event("response.reasoning_text.delta", {{"item_id", it.id},
                                                   {"output_index", items_.size() - 1},
                                                   {"content_index", 0},
                                                   {"delta", d.reasoning}});
  }
  if (!d.content.empty()) {
    Item& it = open(Item(Kind::Message), out);
    it.text += d.content;
    out += event("response.output_text.delta", {{"item_id", it.id},
                                                {"output_index", items_.size() - 1},
                                                {"content_index", 0},
                                                {"delta", d.content},
                                                {"logprobs", json::array()}});
  }
  for (const auto& c : d.calls) {
    Item* it = nullptr;
    for (auto& item : items_) {
      if (item.kind == Kind::Call && item.call_index == c.index) it = &item;
    }
    if (it != nullptr && it->done) {
      // Calls stream in order, so this does not happen; a late fragment would still reach the
      // final object, after its item's events were closed.
      it->text += c.arguments;
      continue;
    }
    if (it == nullptr) it = &open(Item(Kind::Call, "", c.id, c.name, c.index), out);
    if (c.arguments.empty()) continue;
    it->text += c.arguments;
    out += event("response.function_call_arguments.delta",
                 {{"item_id", it->id},
                  {"output_index", static_cast<size_t>(it - items_.data())},
                  {"delta", c.arguments}});
  }
  return out;
}

std::string ResponsesWriter::stream_end(const std::vector<ChoiceResult>& all, const Usage& total) {
  const std::string reason = all.empty() ? "stop" : all[0].engine_reason;
  const bool cut = reason == "length";
  std::string out;
  // An answer with nothing in it is still one (empty) message, as clients read output[0].
  if (items_.empty()) {
    open(Item(Kind::Message), out);
  }
  out += close_open(cut ? "incomplete" : "completed");
  json output = json::array();
  for (const auto& item : items_) output.push_back(item_json(item, false));
  const json r = final_response(reason, total, output);
  out += event(cut ? "response.incomplete" : "response.completed", {{"response", r}});
  return out;
}

std::string ResponsesWriter::stream_error(const ApiError& e) {
  json output = json::array();
  for (auto& item : items_) {
    if (!item.done) item.status = "incomplete";
    item.done = true;
    output.push_back(item_json(item, false));
  }
  json r = response_json("failed", output);
  r["error"] = {{"code", e.code.empty() ? "server_error" : e.code}, {"message", e.what()}};
  return event("response.failed", {{"response", r}});
}

json ResponsesWriter::answer_json(const std::vector<ChoiceResult>& all, const Usage& total) {
  const std::string reason = all.empty() ? "stop" : all[0].engine_reason;
  items_.clear();
  if (!all.empty()) {
    const toolcall::ParsedOutput& msg = all[0].msg;
    if (!msg.reasoning.empty()) {
      items_.emplace_back(Kind::Reasoning, msg.reasoning);
    }
    if (!msg.content.empty()) {
      items_.emplace_back(Kind::Message, msg.content);
    }
    for (size_t i = 0; i < msg.calls.size(); ++i) {
      const auto& c = msg.calls[i];
      items_.emplace_back(Kind::Call, c.arguments.empty() ? "{}" : c.arguments, c.id, c.name, i);
    }
  }
  if (items_.empty()) items_.emplace_back(Kind::Message);
  json output = json::array();
  for (auto& item : items_) {
    item.done = true;
    item.status = "completed";
  }
  if (reason == "length") items_.back().status = "incomplete";
  for (const auto& item : items_) output.push_back(item_json(item, false));
  return final_response(reason, total, output);
}

}  // namespace baton::server
