// The streaming layer. Rules it keeps (docs in output_parser.h):
//  - Reasoning is a leading open…close block (or, with starts_open, the text up to close);
//    whitespace inside its edges and right after the close marker is layout and is dropped,
//    as transformers-style reasoning parsers strip it.
//  - Deltas never split a UTF-8 sequence: an incomplete one at the end waits for its bytes.
//  - finish() never takes back what was sent: when the final parse disagrees with a streamed
//    call (it was cut off or malformed), the call stays as streamed and the final content that
//    was not sent yet (which then holds the call's raw text) follows as content.
#include "toolcall/output_parser.h"

#include <optional>
#include <random>

#include "toolcall/output_builder.h"
#include "toolcall/reasoning_split.h"

namespace baton::toolcall {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// The length of the longest prefix of `s` that does not end inside a UTF-8 sequence.
size_t utf8_complete(std::string_view s) {
  size_t n = s.size();
  size_t back = 0;
  while (back < 4 && back < n && (static_cast<unsigned char>(s[n - 1 - back]) & 0xC0) == 0x80)
    ++back;
  if (back == n) return n;
  unsigned char lead = static_cast<unsigned char>(s[n - 1 - back]);
  size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
  return back + 1 < need ? n - 1 - back : n;
}

// What of `now` is new after `sent`, or nullopt when `now` does not extend it.
std::optional<std::string_view> suffix(std::string_view now, std::string_view sent, bool final) {
  if (!starts_with(now, sent)) return std::nullopt;
  std::string_view rest = now.substr(sent.size());
  return final ? rest : rest.substr(0, utf8_complete(rest));
}

}  // namespace

OutputParser::OutputParser(std::unique_ptr<OutputFormat> format, ReasoningOptions reasoning)
    : format_(std::move(format)), reasoning_(std::move(reasoning)) {}

OutputParser::~OutputParser() = default;

OutputDelta OutputParser::push(std::string_view text) {
  if (finished_ || text.empty()) return {};
  text_.append(text);
  return advance(false);
}

OutputDelta OutputParser::finish() {
  if (finished_) return {};
  OutputDelta d = advance(true);
  finished_ = true;
  return d;
}

ParsedOutput OutputParser::parse_text(std::string_view text, bool final) const {
  ReasoningSplit split = split_reasoning(text, reasoning_, final);
  ParsedOutput out;
  if (format_) {
    out = format_->parse(split.rest, final);
  } else {
    out.content = std::string(split.rest);
  }
  // The format's own reasoning (e.g. Mistral's [THINK]) can only start once a leading block
  // has closed, so appending keeps every field growing at its end.
  out.reasoning = split.reasoning + out.reasoning;
  return out;
}

OutputDelta OutputParser::advance(bool final) {
  ParsedOutput now = parse_text(text_, final);
  OutputDelta d;
  if (auto r = suffix(now.reasoning, sent_.reasoning, final)) d.reasoning = *r;
  if (auto c = suffix(now.content, sent_.content, final)) {
    d.content = *c;
  } else if (final) {
    // A call in the middle was contradicted and its raw text now sits inside the content:
    // nothing is taken back, and nothing is lost either.
    size_t common = 0;
    while (common < sent_.content.size() && now.content[common] == sent_.content[common]) ++common;
    d.content = now.content.substr(common);
  }
  for (size_t i = 0; i < now.calls.size(); ++i) {
    const ToolCall& call = now.calls[i];
    if (i < sent_.calls.size()) {
      const ToolCall& old = sent_.calls[i];
      if (call.name != old.name) break;  // a contradiction: what was sent stays
      auto a = suffix(call.arguments, old.arguments, final);
      if (!a) break;
      if (!a->empty()) d.calls.push_back({i, "", "", std::string(*a)});
      continue;
    }
    ToolCallDelta nd{i, call.id.empty() ? make_call_id() : call.id, call.name, ""};
    if (auto a = suffix(call.arguments, "", final)) nd.arguments = *a;
    d.calls.push_back(std::move(nd));
    sent_.calls.push_back({d.calls.back().id, call.name, ""});
  }
  sent_.reasoning += d.reasoning;
  sent_.content += d.content;
  for (const auto& cd : d.calls) sent_.calls[cd.index].arguments += cd.arguments;
  return d;
}

ParsedOutput OutputParser::parse_complete(std::string_view text) const {
  ParsedOutput out = parse_text(text, true);
  for (auto& call : out.calls) {
    if (call.id.empty()) call.id = make_call_id();
  }
  out.last_call_open = false;
  return out;
}

std::string make_call_id() {
  static constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::uniform_int_distribution<size_t> pick(0, kAlphabet.size() - 1);
  std::string id = "call_";
  for (int i = 0; i < 24; ++i) id += kAlphabet[pick(rng)];
  return id;
}

bool prompt_opens_reasoning(std::string_view prompt, const ReasoningOptions& r) {
  if (r.open.empty()) return false;
  while (!prompt.empty() && std::string_view(" \t\r\n").find(prompt.back()) != std::string::npos)
    prompt.remove_suffix(1);
  return prompt.size() >= r.open.size() && prompt.substr(prompt.size() - r.open.size()) == r.open;
}

}  // namespace baton::toolcall
