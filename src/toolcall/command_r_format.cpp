#include "toolcall/command_r_format.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "toolcall/json_scan.h"
#include "toolcall/markup_scan.h"
#include "util/json_depth.h"

namespace baton::toolcall {

using markup::Block;
using markup::BlockResult;
using markup::Cursor;
using markup::Match;

namespace {

constexpr std::string_view kAction = "Action:";
constexpr std::string_view kStartAction = "<|START_ACTION|>";
constexpr std::string_view kEndAction = "<|END_ACTION|>";
constexpr std::string_view kStartResponse = "<|START_RESPONSE|>";
constexpr std::string_view kEndResponse = "<|END_RESPONSE|>";
constexpr std::string_view kStartThinking = "<|START_THINKING|>";
constexpr std::string_view kEndThinking = "<|END_THINKING|>";

// The list's items as calls; false when an item is not a call.
bool read_calls(std::string_view list, ParsedOutput& out) {
  auto items = util::parse_json_bounded<nlohmann::ordered_json>(list);
  if (!items.is_array()) return false;
  for (const auto& item : items) {
    if (!item.is_object() || !item.contains("tool_name") || !item["tool_name"].is_string())
      return false;
    ToolCall call;
    call.name = item["tool_name"].get<std::string>();
    auto args = item.value("parameters", nlohmann::ordered_json::object());
    if (!args.is_object()) return false;
    call.arguments = args.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    if (item.contains("tool_call_id")) {
      const auto& id = item["tool_call_id"];
      call.id = id.is_string() ? id.get<std::string>() : id.dump();
    }
    out.calls.push_back(std::move(call));
  }
  return true;
}

// "Action:" / <|START_ACTION|>, the JSON list, then the fence or <|END_ACTION|>.
BlockResult action(Cursor c, bool fenced, bool final, ParsedOutput& out) {
  if (fenced) {
    Match m = c.literal("```");
    if (m != Match::yes) return {markup::unopened(m)};
    if (c.exact("json") == Match::partial) return {Block::incomplete};
  }
  Match m = c.literal("[");
  if (m != Match::yes) return {markup::unopened(m)};
  size_t start = c.pos - 1;
  json::Scan list = json::scan_value(c.text, start);
  if (list.status == json::Status::partial) return {Block::incomplete};
  size_t end = list.end;
  if (list.status == json::Status::invalid || !read_calls(c.text.substr(start, end - start), out))
    return {Block::not_markup};
  c.pos = end;
  m = c.literal(fenced ? "```" : kEndAction);
  if (m == Match::yes) return {Block::done, c.pos};
  // A missing close is forgiven: at the end of the text, or when other text follows.
  if (m == Match::partial && !final) return {Block::incomplete};
  return {Block::done, m == Match::partial ? c.text.size() : end};
}

// <|START_THINKING|>...<|END_THINKING|>: reasoning, streamed.
BlockResult thinking(Cursor c, bool final, ParsedOutput& out) {
  size_t stop = c.find(kEndThinking);
  std::string_view body = c.text.substr(c.pos, stop == markup::npos ? stop : stop - c.pos);
  if (stop == markup::npos && !final) {
    body.remove_suffix(markup::partial_suffix(body, kEndThinking));
    body = markup::trim_right(body);
    out.reasoning +=
        markup::trim_left(body.substr(0, body.size() - markup::incomplete_utf8_suffix(body)));
    return {Block::incomplete};
  }
  out.reasoning += markup::trim(body);
  return {Block::done, stop == markup::npos ? c.text.size() : stop + kEndThinking.size()};
}

}  // namespace

ParsedOutput CommandRFormat::parse(std::string_view text, bool final) const {
  std::vector<std::string> openers = {std::string(kAction), std::string(kStartAction),
                                      std::string(kStartResponse), std::string(kEndResponse),
                                      std::string(kStartThinking)};
  return markup::scan_blocks(text, final, openers,
                             [](std::string_view t, size_t start, bool fin, ParsedOutput& out) {
                               Cursor c{t, start};
                               for (auto marker : {kStartResponse, kEndResponse})
                                 if (c.exact(marker) == Match::yes)
                                   return BlockResult{Block::done, c.pos};
                               if (c.exact(kStartThinking) == Match::yes)
                                 return thinking(c, fin, out);
                               bool fenced = c.exact(kAction) == Match::yes;
                               if (!fenced) c.exact(kStartAction);
                               return action(c, fenced, fin, out);
                             });
}

// Both spellings: R7B and later between <|START_ACTION|> and <|END_ACTION|> with an id in each
// item; Command R+ after "Action:" in a ```json fence. The model writes the one it was taught.
std::string CommandRFormat::call_grammar(const CallGrammarRequest& req, GrammarSink& sink) const {
  namespace cg = call_grammar;
  const auto tools = cg::tools(req, sink);
  if (tools.empty()) return "";
  // Its template indents the list's items by four spaces after a newline.
  const std::string w = sink.rule("list-ws", R"([ \t\n]{0,8})");
  std::string items;
  for (const auto& t : tools) {
    items += fmt::format(
        "{}\"{{\" {} (\"\\\"tool_call_id\\\"\" {} \":\" {} \"\\\"\" [0-9]{{1,3}} \"\\\"\" {} \",\" "
        "{})? "
        "\"\\\"tool_name\\\"\" {} \":\" {} {} {} \",\" {} \"\\\"parameters\\\"\" {} \":\" {} {} {} "
        "\"}}\"",
        items.empty() ? "" : " | ", w, w, w, w, w, w, w,
        cg::literal(nlohmann::ordered_json(t.name).dump()), w, w, w, w, t.arguments, w);
  }
  const std::string item = sink.rule("call", items);
  const std::string list = sink.rule(
      "calls",
      fmt::format("\"[\" {} {} {} \"]\"", w, cg::one_or_more(item, "\",\" " + w, req.parallel), w));
  return fmt::format("({} {} {} | \"Action:\" {} \"```json\" {} {} {} \"```\")",
                     cg::literal(kStartAction), list, cg::literal(kEndAction), w, w, list, w);
}

std::vector<std::string> CommandRFormat::markers() const {
  return {std::string(kStartAction), std::string(kEndAction),     std::string(kStartResponse),
          std::string(kEndResponse), std::string(kStartThinking), std::string(kEndThinking)};
}

}  // namespace baton::toolcall
