#include "toolcall/json_args_format.h"

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

constexpr size_t kMaxHeader = 256;  // a longer "header" is prose, not markup

class CallReader {
 public:
  CallReader(const JsonArgsSpec& spec, std::string_view text, bool final, ParsedOutput& out)
      : spec_(spec), c_{text, 0}, final_(final), out_(out) {}

  BlockResult block(size_t start) {
    c_.pos = start;
    return markup::read_section(c_, final_, spec_.section_open, spec_.section_close,
                                [this] { return call(); });
  }

 private:
  Block call() {
    Match m = c_.literals(spec_.call_open);
    if (m != Match::yes) return markup::unopened(m);
    size_t stop = c_.find(spec_.header_end);
    std::string_view header = c_.text.substr(c_.pos, stop == markup::npos ? stop : stop - c_.pos);
    if (stop == markup::npos)
      return header.size() > kMaxHeader ? Block::not_markup : Block::incomplete;
    ToolCall call;
    if (header.size() > kMaxHeader || !spec_.read_header(markup::trim(header), call))
      return Block::not_markup;
    c_.pos = markup::skip_space(c_.text, stop + spec_.header_end.size());
    // The call is reported once its object has begun: prose that only looks like a header
    // ("<function=name> is ...") stays content.
    if (c_.at_end()) return Block::incomplete;
    if (c_.text[c_.pos] != '{') return Block::not_markup;
    out_.calls.push_back(std::move(call));
    out_.last_call_open = true;
    return arguments();
  }

  // The object's text as written: streamed as it grows, checked once whole.
  Block arguments() {
    ToolCall& call = out_.calls.back();
    size_t start = c_.pos;
    json::Scan scan = json::scan_value(c_.text, start);
    if (scan.status != json::Status::complete) {
      // Streamed up to where the text ends, or stops being JSON (then the call is malformed and
      // the final parse returns it as content).
      std::string_view part = c_.text.substr(start, scan.end - start);
      call.arguments = part.substr(0, part.size() - markup::incomplete_utf8_suffix(part));
      return scan.status == json::Status::partial ? Block::incomplete : Block::malformed;
    }
    size_t end = scan.end;
    std::string_view object = c_.text.substr(start, end - start);
    auto parsed = util::parse_json_bounded<nlohmann::json>(object);
    if (parsed.is_discarded() || !parsed.is_object()) return Block::malformed;
    call.arguments = object;
    c_.pos = end;
    Match m = c_.literal(spec_.call_close.front());
    if (m == Match::no) return Block::malformed;
    if (m == Match::partial) return final_ ? Block::malformed : Block::incomplete;
    out_.last_call_open = false;
    return markup::close_rest(c_, final_, spec_.call_close);
  }

  const JsonArgsSpec& spec_;
  Cursor c_;
  bool final_;
  ParsedOutput& out_;
};

}  // namespace

bool read_name_header(std::string_view header, ToolCall& call) {
  if (header.empty()) return false;
  for (char c : header)
    if (markup::is_space(c) || c == '<' || c == '>' || c == '"' || c == '{') return false;
  call.name = header;
  return true;
}

std::string JsonArgsFormat::call_grammar(const CallGrammarRequest& req, GrammarSink& sink) const {
  namespace cg = toolcall::call_grammar;
  if (spec_.header_gbnf.empty()) return "";
  const auto tools = cg::tools(req, sink);
  if (tools.empty()) return "";
  std::string body;
  for (const auto& t : tools) {
    std::string header = spec_.header_gbnf;
    const size_t at = header.find("NAME");
    header.replace(at, 4, cg::literal(t.name));
    if (!body.empty()) body += " | ";
    body += fmt::format("{} {} {} {}", cg::literal(spec_.call_open.front()), header,
                        cg::literal(spec_.header_end), t.arguments);
    for (const auto& piece : spec_.call_close) {
      body += ' ';
      body += cg::literal(piece);
    }
  }
  std::string calls = cg::one_or_more(sink.rule("tool-call", body), "", req.parallel);
  if (spec_.section_open.empty()) return calls;
  return fmt::format("{} {} {}", cg::literal(spec_.section_open.front()), calls,
                     cg::literal(spec_.section_close.front()));
}

ParsedOutput JsonArgsFormat::parse(std::string_view text, bool final) const {
  return markup::scan_blocks(text, final,
                             {markup::block_opener(spec_.section_open, spec_.call_open)},
                             [&](std::string_view t, size_t start, bool fin, ParsedOutput& out) {
                               return CallReader(spec_, t, fin, out).block(start);
                             });
}

}  // namespace baton::toolcall
