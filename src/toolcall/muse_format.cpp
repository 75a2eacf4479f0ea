#include "toolcall/muse_format.h"

#include <algorithm>

#include "toolcall/markup_text.h"
#include "toolcall/xml_families.h"

// GCC 12 reports a -Wrestrict overlap inside std::string's inlined copy when the spec assigns
// string lists (GCC bug 105329, a false positive fixed in GCC 13); nothing here aliases.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

namespace baton::toolcall {

namespace {

constexpr std::string_view kStart = "<|start|>assistant";
constexpr std::string_view kMessage = "<|message|>";
// What ends a body (<|start|> is not consumed).
constexpr std::string_view kNextMessage = "<|start|>";
constexpr std::string_view kEnds[] = {"<|eom|>", "<|eot|>", kNextMessage};
constexpr size_t kMaxHeader = 256;  // a longer "header" is prose
constexpr std::string_view kCallsOpen = "<atem:function_calls>";
constexpr std::string_view kCallsClose = "</atem:function_calls>";

XmlCallSpec atem() {
  XmlCallSpec s = name_attr_spec("muse-glimmer", "atem:invoke", "atem:parameter");
  s.section_open = {std::string(kCallsOpen)};
  s.section_close = {std::string(kCallsClose)};
  return s;
}

// Whether `header` (the text before <|message|>, or all that is left) is, or may still become,
// " to=RECIPIENT".
bool header_like(std::string_view header) {
  std::string_view h = markup::trim_left(header);
  if (h.size() > kMaxHeader || h.find('\n') != std::string_view::npos) return false;
  return h.starts_with("to=") || std::string_view("to=").starts_with(h);
}

// The recipient of a finished header; "" when it names none (an empty header, or only a
// beginning of "to=": header_like accepts those while the header may still grow).
std::string recipient(std::string_view header) {
  std::string_view h = markup::trim(header);
  return h.starts_with("to=") ? std::string(markup::first_word(h.substr(3))) : std::string();
}

}  // namespace

std::string MuseFormat::call_grammar(const CallGrammarRequest& req, GrammarSink& sink) const {
  namespace cg = call_grammar;
  std::string messages;
  for (const auto& tool : req.tools) {
    CallGrammarRequest one;
    one.tools = nlohmann::ordered_json::array({tool});
    one.parallel = false;
    const std::string section = calls_.call_grammar(one, sink);
    if (section.empty()) continue;
    const auto& fn = tool.contains("function") ? tool["function"] : tool;
    const std::string header = " to=" + fn["name"].get<std::string>() + std::string(kMessage);
    messages += (messages.empty() ? "" : " | ") + cg::literal(header) + " " + section;
  }
  if (messages.empty()) return "";
  const std::string call = sink.rule("call-message", messages);
  // Reasoning text holds no special token ("<|").
  const std::string think = sink.rule("self-text", R"(([^<] | "<" [^|])*)");
  const std::string next = cg::literal("<|eom|>" + std::string(kStart));
  return "(" + cg::literal(" to=self" + std::string(kMessage)) + " " + think + " " + next + ")? " +
         cg::one_or_more(call, next, req.parallel);
}

MuseFormat::MuseFormat(const FormatContext& ctx) : calls_(atem(), ctx) {}

// A tool message's body: false when it is complete but holds no call. Its content (text around
// the calls) is added once the body is complete, since until then it may still be a broken
// call's raw text.
bool MuseFormat::add_calls(std::string_view body, bool complete, bool final,
                           ParsedOutput& out) const {
  ParsedOutput calls = calls_.parse(body, complete);
  bool broken = complete && calls.calls.empty();
  if (broken && final) return false;
  if (broken) calls = calls_.parse(body, false);
  if (broken || !complete) calls.content.clear();
  out.content += calls.content;
  for (auto& c : calls.calls) out.calls.push_back(std::move(c));
  out.last_call_open = calls.last_call_open;
  return !broken;
}

ParsedOutput MuseFormat::parse(std::string_view text, bool final) const {
  ParsedOutput out;
  size_t pos = 0;
  while (pos < text.size()) {
    std::string_view rest = text.substr(pos);
    if (rest.starts_with(kStart)) {
      pos += kStart.size();
      continue;
    }
    if (!final && kStart.starts_with(rest)) break;
    size_t msg_start = pos, header_end = text.find(kMessage, pos);
    std::string_view header = text.substr(pos, std::min(header_end, text.size()) - pos);
    std::string to;
    if (header_like(header) && header_end != markup::npos) {
      to = recipient(header);
      pos = header_end + kMessage.size();
    } else if (header_like(header) && !final) {
      break;  // a header still being written
    }
    const bool call = !to.empty() && to != "self" && to != "user";
    auto [end, consumed] = call ? markup::find_section_body_end(text, pos, kEnds, kNextMessage,
                                                                kCallsOpen, kCallsClose)
                                : markup::find_body_end(text, pos, kEnds, kNextMessage);
    if (end == msg_start && consumed == 0) {
      // Another role's <|start|> where a message begins: its marker is all this loop would
      // read, so step over it or the loop never moves.
      pos += kNextMessage.size();
      continue;
    }
    bool complete = end != markup::npos || final;
    std::string_view body = text.substr(pos, (end == markup::npos ? text.size() : end) - pos);
    if (!complete) body.remove_suffix(markup::body_held_back(body, kEnds));
    pos = end == markup::npos ? text.size() : end + consumed;
    if (to == "self") {
      out.reasoning += body;
    } else if (to.empty() || to == "user") {
      out.content += body;
    } else if (!add_calls(body, complete, final, out)) {
      if (!final) break;  // a broken call: what streamed stays until the end
      out.content += text.substr(msg_start, pos - msg_start);
    }
    if (!complete) break;
  }
  if (final) out.last_call_open = false;
  return out;
}

std::vector<std::string> MuseFormat::markers() const {
  return {"<|start|>", "<|message|>", "<|eom|>", "<|eot|>"};
}

}  // namespace baton::toolcall
