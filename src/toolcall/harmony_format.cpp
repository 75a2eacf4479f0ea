#include "toolcall/harmony_format.h"

#include <nlohmann/json.hpp>

#include "toolcall/markup_text.h"
#include "util/json_depth.h"

namespace baton::toolcall {

namespace {

constexpr std::string_view kStart = "<|start|>";
constexpr std::string_view kChannel = "<|channel|>";
constexpr std::string_view kMessage = "<|message|>";
// What ends a body (<|start|> is not consumed).
constexpr std::string_view kEnds[] = {"<|end|>", "<|call|>", "<|return|>", kStart};

struct Header {
  std::string channel;
  std::string recipient;  // "" when the message is for the user
};

// The token after `key` in the header, up to whitespace or the next special token.
std::string word_after(std::string_view header, std::string_view key) {
  auto at = header.find(key);
  if (at == std::string_view::npos) return "";
  return std::string(markup::first_word(markup::trim_left(header.substr(at + key.size()))));
}

Header read_header(std::string_view header) {
  return {word_after(header, kChannel), word_after(header, "to=")};
}

// A call's body: its JSON text, or false when it is not an object (then it is content).
bool add_call(const Header& h, std::string_view body, bool complete, ParsedOutput& out) {
  std::string name = h.recipient;
  if (name.rfind("functions.", 0) == 0) name = name.substr(10);
  std::string_view args = markup::trim(body);
  if (complete) {
    auto parsed = util::parse_json_bounded<nlohmann::json>(args);
    if (parsed.is_discarded() || !parsed.is_object()) return false;
  }
  out.calls.push_back({"", name, std::string(args)});
  out.last_call_open = !complete;
  return true;
}

}  // namespace

ParsedOutput HarmonyFormat::parse(std::string_view text, bool final) const {
  ParsedOutput out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t msg_start = pos;
    size_t header_end = text.find(kMessage, pos);
    if (header_end == markup::npos) {
      // A header still being written, or (at the end) text that is no message: content.
      if (final) out.content += text.substr(pos);
      break;
    }
    Header h = read_header(text.substr(pos, header_end - pos));
    size_t body_start = header_end + kMessage.size();
    auto [end, consumed] = h.recipient.empty()
                               ? markup::find_body_end(text, body_start, kEnds, kStart)
                               : markup::find_json_body_end(text, body_start, kEnds, kStart);
    bool complete = end != markup::npos || final;
    std::string_view body =
        text.substr(body_start, (end == markup::npos ? text.size() : end) - body_start);
    if (!complete) body.remove_suffix(markup::body_held_back(body, kEnds));
    pos = end == markup::npos ? text.size() : end + consumed;
    if (!h.recipient.empty()) {
      if (!complete) body = markup::trim_right(body);
      if (!add_call(h, body, complete, out))
        out.content += text.substr(msg_start, pos - msg_start);  // malformed: raw
    } else if (h.channel == "analysis") {
      out.reasoning += body;
    } else {
      out.content += body;
    }
    if (!complete) break;
  }
  if (final) out.last_call_open = false;
  return out;
}

std::string HarmonyFormat::call_grammar(const CallGrammarRequest& req, GrammarSink& sink) const {
  namespace cg = call_grammar;
  const auto tools = cg::tools(req, sink);
  if (tools.empty()) return "";
  std::string alternatives;
  for (const auto& t : tools) {
    if (!alternatives.empty()) alternatives += " | ";
    alternatives += cg::literal("<|channel|>commentary to=functions." + t.name +
                                " <|constrain|>json<|message|>") +
                    " " + t.arguments + " " + cg::literal("<|call|>");
  }
  const std::string call = sink.rule("harmony-call", alternatives);
  return cg::one_or_more(call, cg::literal("<|start|>assistant"), req.parallel);
}

std::vector<std::string> HarmonyFormat::markers() const {
  return {"<|start|>", "<|channel|>", "<|message|>", "<|constrain|>",
          "<|end|>",   "<|call|>",    "<|return|>"};
}

}  // namespace baton::toolcall
