#include "format_check.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

#include "chat/chat_template.h"
#include "support/shared_files.h"
#include "toolcall/reasoning_split.h"

namespace baton::toolcall::testing {
namespace {

using nlohmann::ordered_json;

// OutputParser owns its format; the checks lend it one they do not own.
class Borrowed : public OutputFormat {
 public:
  explicit Borrowed(const OutputFormat& f) : f_(f) {}
  std::string_view name() const override { return f_.name(); }
  ParsedOutput parse(std::string_view text, bool final) const override {
    return f_.parse(text, final);
  }
  std::vector<std::string> markers() const override { return f_.markers(); }

 private:
  const OutputFormat& f_;
};

std::string describe(const ParsedOutput& p) {
  std::ostringstream s;
  s << "reasoning=" << ordered_json(p.reasoning).dump()
    << " content=" << ordered_json(p.content).dump() << " calls=[";
  for (const auto& c : p.calls)
    s << "{id=" << c.id << " name=" << c.name << " args=" << c.arguments << "} ";
  s << "]";
  return s.str();
}

bool same_arguments(const std::string& a, const std::string& b) {
  auto ja = nlohmann::json::parse(a, nullptr, false);
  auto jb = nlohmann::json::parse(b, nullptr, false);
  if (ja.is_discarded() || jb.is_discarded()) return a == b;
  return ja == jb;
}

// `made_up_ids`: an expected empty id means the streaming layer made one up.
bool same_output(const ParsedOutput& got, const ParsedOutput& want, bool made_up_ids) {
  if (got.reasoning != want.reasoning || got.content != want.content) return false;
  if (got.calls.size() != want.calls.size()) return false;
  for (size_t i = 0; i < got.calls.size(); ++i) {
    const auto &g = got.calls[i], &w = want.calls[i];
    if (g.name != w.name || !same_arguments(g.arguments, w.arguments)) return false;
    bool id_ok = w.id.empty() && made_up_ids ? g.id.rfind("call_", 0) == 0 && g.id.size() == 29
                                             : g.id == w.id;
    if (!id_ok) return false;
  }
  return true;
}

std::string show_split(const std::vector<std::string_view>& pieces) {
  std::string s;
  for (auto p : pieces) s += ordered_json(std::string(p)).dump() + " | ";
  return s;
}

// Streams one split; returns false (after reporting) on the first problem.
bool check_split(const OutputFormat* format, const ReasoningOptions& reasoning,
                 const std::vector<std::string_view>& pieces, const ParsedOutput& expected,
                 CheckOptions options) {
  OutputParser parser(format ? std::make_unique<Borrowed>(*format) : nullptr, reasoning);
  std::vector<std::string> markup = format ? format->markers() : std::vector<std::string>{};
  markup.push_back(reasoning.open);
  markup.push_back(reasoning.close);
  ParsedOutput sum;
  std::string problem;
  auto take = [&](const OutputDelta& d) {
    sum.reasoning += d.reasoning;
    sum.content += d.content;
    for (const auto& m : markup) {
      if (m.empty()) continue;
      if (d.reasoning.find(m) != std::string::npos ||
          (!options.markup_is_content && d.content.find(m) != std::string::npos))
        problem = "markup " + m + " in a delta";
    }
    for (const auto& c : d.calls) {
      if (c.index == sum.calls.size()) {
        if (c.name.empty() || c.id.empty()) problem = "a call's first delta lacks its name or id";
        sum.calls.push_back({c.id, c.name, c.arguments});
      } else if (c.index < sum.calls.size()) {
        if (!c.name.empty() || !c.id.empty()) problem = "a call's name or id sent twice";
        sum.calls[c.index].arguments += c.arguments;
      } else {
        problem = "call index " + std::to_string(c.index) + " skips one";
      }
    }
  };
  for (auto p : pieces) take(parser.push(p));
  take(parser.finish());
  if (problem.empty() && !same_output(sum, expected, true))
    problem = "deltas add up to something else";
  if (problem.empty() && !same_output(parser.result(), sum, false))
    problem = "result() differs from the deltas";
  if (problem.empty()) return true;
  ADD_FAILURE() << problem << "\n  split: " << show_split(pieces)
                << "\n  got:      " << describe(sum) << "\n  expected: " << describe(expected);
  return false;
}

// Whether `later` extends `earlier` as a non-final parse must: only the open last call's
// arguments may still grow, a complete call's stay as they were.
std::string extension_problem(const ParsedOutput& earlier, const ParsedOutput& later) {
  auto extends = [](const std::string& a, const std::string& b) { return a.rfind(b, 0) == 0; };
  if (!extends(later.reasoning, earlier.reasoning)) return "reasoning shrank or changed";
  if (!extends(later.content, earlier.content)) return "content shrank or changed";
  if (later.calls.size() < earlier.calls.size()) return "a call disappeared";
  for (size_t i = 0; i < earlier.calls.size(); ++i) {
    const auto &a = earlier.calls[i], &b = later.calls[i];
    if (a.name != b.name || a.id != b.id) return "a call's name or id changed";
    if (!extends(b.arguments, a.arguments)) return "a call's arguments changed";
    bool open = earlier.last_call_open && i + 1 == earlier.calls.size();
    if (!open && a.arguments != b.arguments) return "a complete call's arguments changed";
  }
  return "";
}

}  // namespace

ToolCall call(std::string name, std::string arguments, std::string id) {
  return {std::move(id), std::move(name), std::move(arguments)};
}

ParsedOutput output(std::string content, std::vector<ToolCall> calls, std::string reasoning) {
  ParsedOutput p;
  p.content = std::move(content);
  p.calls = std::move(calls);
  p.reasoning = std::move(reasoning);
  return p;
}

void expect_streams(const OutputFormat* format, const ReasoningOptions& reasoning,
                    std::string_view text, const ParsedOutput& expected, CheckOptions options) {
  if (!check_split(format, reasoning, {text}, expected, options)) return;
  std::vector<std::string_view> bytes;
  for (size_t i = 0; i < text.size(); ++i) bytes.push_back(text.substr(i, 1));
  if (!check_split(format, reasoning, bytes, expected, options)) return;
  for (size_t cut = 1; cut < text.size(); ++cut) {
    if (!check_split(format, reasoning, {text.substr(0, cut), text.substr(cut)}, expected, options))
      return;
  }
  std::mt19937 rng(12345);
  for (int round = 0; round < 20 && !text.empty(); ++round) {
    std::vector<std::string_view> pieces;
    for (size_t pos = 0; pos < text.size();) {
      size_t n = std::uniform_int_distribution<size_t>(1, 8)(rng);
      pieces.push_back(text.substr(pos, n));
      pos += pieces.back().size();
    }
    if (!check_split(format, reasoning, pieces, expected, options)) return;
  }
}

void expect_monotonic(const OutputFormat& format, std::string_view text, CheckOptions options) {
  ParsedOutput prev = format.parse("", false);
  for (size_t i = 1; i <= text.size(); ++i) {
    ParsedOutput now = format.parse(text.substr(0, i), false);
    std::string problem = extension_problem(prev, now);
    for (const auto& m : format.markers()) {
      if (now.content.find(m) != std::string::npos && !options.markup_is_content)
        problem = "markup " + m + " in non-final content";
    }
    if (!problem.empty()) {
      ADD_FAILURE() << problem << " at prefix "
                    << ordered_json(std::string(text.substr(0, i))).dump()
                    << "\n  before: " << describe(prev) << "\n  after:  " << describe(now);
      return;
    }
    prev = std::move(now);
  }
  if (options.markup_is_content) return;
  std::string problem = extension_problem(prev, format.parse(text, true));
  EXPECT_EQ(problem, "") << "the final parse contradicts the last non-final one";
}

void expect_malformed(const OutputFormat& format, const std::string& text) {
  ParsedOutput p = format.parse(text, true);
  EXPECT_EQ(p.content, text);
  EXPECT_TRUE(p.calls.empty()) << text;
  expect_monotonic(format, text, {.markup_is_content = true});
}

void expect_parses(const OutputFormat& format, std::string_view text, const ParsedOutput& expected,
                   CheckOptions options) {
  ParsedOutput whole = format.parse(text, true);
  EXPECT_TRUE(same_output(whole, expected, false))
      << "final parse of " << ordered_json(std::string(text)).dump()
      << "\n  got:      " << describe(whole) << "\n  expected: " << describe(expected);
  ReasoningOptions no_reasoning;
  no_reasoning.enabled = false;
  expect_streams(&format, no_reasoning, text, expected, options);
  expect_monotonic(format, text, options);
}

ParsedOutput parse_streamed(const OutputFormat& format, std::string_view text) {
  ParsedOutput whole = format.parse(text, true);
  ParsedOutput previous;
  for (size_t i = 0; i <= text.size(); ++i) {
    ParsedOutput now = format.parse(text.substr(0, i), false);
    std::string problem = extension_problem(previous, now);
    if (problem.empty()) {
      problem = extension_problem(now, whole);
      if (!problem.empty()) problem += " (in the final parse)";
    }
    if (!problem.empty()) {
      ADD_FAILURE() << problem << " at prefix "
                    << ordered_json(std::string(text.substr(0, i))).dump()
                    << "\n  before: " << describe(previous) << "\n  after:  " << describe(now)
                    << "\n  final:  " << describe(whole);
      break;
    }
    previous = std::move(now);
  }
  return whole;
}

void expect_call(const ToolCall& call, const std::string& name, const std::string& args) {
  EXPECT_EQ(call.name, name);
  auto parsed = nlohmann::json::parse(call.arguments, nullptr, false);
  ASSERT_FALSE(parsed.is_discarded()) << "arguments are not JSON: " << call.arguments;
  EXPECT_EQ(parsed, nlohmann::json::parse(args)) << call.arguments;
}

}  // namespace baton::toolcall::testing
