// DeepSeek V3.2 / V4 "DSML" calls (V3.2 says function_calls, V4 tool_calls):
//   <｜DSML｜function_calls>
//   <｜DSML｜invoke name="get_weather">
//   <｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>
//   <｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>
//   </｜DSML｜invoke>
//   </｜DSML｜function_calls>
// The arguments' JSON is built as the parameters arrive: a string="true" value is a JSON
// string of the raw text, any other value is JSON text as written.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "toolcall/format_factories.h"
#include "toolcall/json_scan.h"
#include "toolcall/output_builder.h"

namespace baton::toolcall {
namespace {

constexpr std::string_view kInvoke = "<｜DSML｜invoke name=\"";
constexpr std::string_view kInvokeEnd = "</｜DSML｜invoke>";
constexpr std::string_view kParam = "<｜DSML｜parameter name=\"";
constexpr std::string_view kParamEnd = "</｜DSML｜parameter>";
// V3.2 opens its section with function_calls, V4 with tool_calls; each closes its own.
const std::vector<std::string> kOpens = {"<｜DSML｜function_calls>", "<｜DSML｜tool_calls>"};
const std::vector<std::string> kCloses = {"</｜DSML｜function_calls>", "</｜DSML｜tool_calls>"};
constexpr size_t kWait = std::string_view::npos;
constexpr size_t kBad = kWait - 1;

// `s` without an incomplete UTF-8 sequence at its end (JSON escaping needs whole characters).
std::string_view whole_chars(std::string_view s) {
  size_t n = s.size(), back = 0;
  while (back < 3 && back < n && (static_cast<unsigned char>(s[n - 1 - back]) & 0xC0) == 0x80)
    ++back;
  if (back == n) return s;
  unsigned char lead = static_cast<unsigned char>(s[n - 1 - back]);
  size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
  return back + 1 < need ? s.substr(0, n - 1 - back) : s;
}

std::string quote(std::string_view s, bool closed) {
  std::string q =
      nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (!closed) q.pop_back();
  return q;
}

class DsmlFormat : public OutputFormat {
 public:
  std::string_view name() const override { return "deepseek-v3.2"; }
  std::vector<std::string> markers() const override {
    return {"<｜DSML｜function_calls>", "</｜DSML｜function_calls>", "<｜DSML｜tool_calls>",
            "</｜DSML｜tool_calls>", "｜DSML｜"};
  }

  ParsedOutput parse(std::string_view text, bool final) const override {
    OutputBuilder out(final);
    scan_markers(text, 0, final, kOpens, out,
                 [&](const MarkerHit& hit) { return take_section(text, hit, final, out); });
    return out.take();
  }

  // Both sections open with this; no prose writes it.
  std::string call_trigger() const override { return "<｜DSML｜"; }
  std::string call_grammar(const CallGrammarRequest& req, GrammarSink& sink) const override;

 private:
  // The section that opens at `hit`: its invokes up to its close; returns where content goes
  // on, or kWait. A malformed section is raw content, to the end; while streaming, it waits.
  static size_t take_section(std::string_view text, const MarkerHit& hit, bool final,
                             OutputBuilder& out) {
    std::vector<std::pair<ToolCall, bool>> found;
    size_t i = hit.pos + kOpens[hit.which].size();
    size_t end = kBad;
    while (true) {
      i = json::skip_ws(text, i);
      std::string_view rest = text.substr(i);
      if (rest.starts_with(kCloses[hit.which])) {
        end = i + kCloses[hit.which].size();
        break;
      }
      if (!rest.starts_with(kInvoke)) {
        bool wait = !final && (may_become(rest, kCloses[hit.which]) || may_become(rest, kInvoke));
        end = wait ? kWait : kBad;
        break;
      }
      i = take_invoke(text, i + kInvoke.size(), final, found);
      if (i == kWait || i == kBad) {
        end = i;
        break;
      }
    }
    if (end == kBad && final) {
      out.add_content(text.substr(hit.pos));  // malformed: raw, to the end
      return kWait;
    }
    for (auto& [c, open] : found) out.add_call(std::move(c), open);
    return end == kBad ? kWait : end;
  }

  // One invoke after `<｜DSML｜invoke name="`: appends it (open while streaming); returns where
  // the next may start, kWait or kBad.
  static size_t take_invoke(std::string_view text, size_t i, bool final,
                            std::vector<std::pair<ToolCall, bool>>& found) {
    size_t q = text.find("\">", i);
    if (q == std::string_view::npos) return final ? kBad : kWait;
    std::string name(text.substr(i, q - i));
    if (name.empty() || name.find_first_of("\"<>\n") != std::string::npos) return kBad;
    std::string args = "{";
    size_t k = q + 2;
    auto open_call = [&](std::string a) {
      if (final) return kBad;
      found.push_back({{"", name, std::move(a)}, true});
      return kWait;
    };
    while (true) {
      k = json::skip_ws(text, k);
      std::string_view rest = text.substr(k);
      if (rest.starts_with(kInvokeEnd)) {
        args += "}";
        if (!json::is_object(args)) return kBad;
        found.push_back({{"", name, args}, false});
        return k + kInvokeEnd.size();
      }
      if (!rest.starts_with(kParam)) {
        if (!final && (may_become(rest, kInvokeEnd) || may_become(rest, kParam)))
          return open_call(args);
        return kBad;
      }
      size_t n0 = k + kParam.size();
      size_t nq = text.find('"', n0);
      size_t gt = nq == std::string_view::npos ? nq : text.find('>', nq);
      if (gt == std::string_view::npos) return open_call(args);
      std::string_view pname = text.substr(n0, nq - n0);
      bool is_string = text.substr(nq, gt - nq).find("string=\"true\"") != std::string_view::npos;
      args += (args.size() > 1 ? ", " : "") + quote(pname, true) + ": ";
      size_t v0 = gt + 1;
      size_t ve = text.find(kParamEnd, v0);
      if (ve == std::string_view::npos) {
        std::string_view v = text.substr(v0);
        v = v.substr(0, partial_marker_start(v, kParamEnd));
        return open_call(args + (is_string ? quote(whole_chars(v), false) : std::string(v)));
      }
      std::string_view v = text.substr(v0, ve - v0);
      args += is_string ? quote(v, true) : std::string(v);
      k = ve + kParamEnd.size();
    }
  }
};

// A parameter as the template writes it: a string (type "string") as its raw text with
// string="true" (its enum's choices where it has one), any other value as JSON text held to its
// schema with string="false".
std::string dsml_parameter(const call_grammar::Property& p, const std::string& tool,
                           GrammarSink& sink, std::string& raw_text) {
  namespace cg = call_grammar;
  const auto& s = p.schema;
  const bool text = s.is_object() && s.contains("type") && s["type"] == "string";
  std::string value;
  if (text) {
    for (const auto& v : cg::string_choices(s))
      if (v.find(kParamEnd) == std::string::npos)
        value += (value.empty() ? "" : " | ") + cg::literal(v);
    if (value.empty()) {
      if (raw_text.empty()) raw_text = cg::text_before(kParamEnd, sink);
      value = raw_text;
    }
  } else {
    value = sink.json_value(s, tool + "-" + p.key);
  }
  return sink.rule(tool + "-" + p.key,
                   fmt::format("{} {} ({}) {}",
                               cg::literal(std::string(kParam) + p.key + "\" string=\"" +
                                           (text ? "true" : "false") + "\">"),
                               "", value, cg::literal(kParamEnd)));
}

std::string DsmlFormat::call_grammar(const CallGrammarRequest& req, GrammarSink& sink) const {
  namespace cg = toolcall::call_grammar;
  std::string calls, raw_text;
  for (const auto& [name, params] : cg::tool_schemas(req)) {
    if (name.empty() || name.find_first_of("\"<>\n") != std::string::npos) continue;
    std::string body = cg::literal(std::string(kInvoke) + name + "\">");
    for (const auto& p : cg::properties(params)) {
      if (p.key.empty() || p.key.find_first_of("\"<>\n") != std::string::npos) continue;
      const std::string one = "\"\\n\" " + dsml_parameter(p, name, sink, raw_text);
      body += p.required ? " " + one : " (" + one + ")?";
    }
    body += " \"\\n\" " + cg::literal(kInvokeEnd);
    calls += (calls.empty() ? "" : " | ") + sink.rule(name + "-call", body);
  }
  if (calls.empty()) return "";
  const std::string call = sink.rule("call", calls);
  const std::string many = cg::one_or_more(call, "\"\\n\"", req.parallel);
  // V3.2 says function_calls, V4 tool_calls: the model writes the one its template taught.
  std::string out;
  for (size_t i = 0; i < kOpens.size(); ++i) {
    out += fmt::format("{}{} \"\\n\" {} \"\\n\" {}", out.empty() ? "" : " | ",
                       cg::literal(kOpens[i]), many, cg::literal(kCloses[i]));
  }
  return "(" + out + ")";
}

}  // namespace

std::unique_ptr<OutputFormat> make_dsml_format() {
  return std::make_unique<DsmlFormat>();
}

}  // namespace baton::toolcall
