#pragma once
// The checks every output format must pass, shared by the tests of all families:
//  - expect_parses: the final parse equals what is expected; streaming the text through
//    OutputParser in every split into two pieces, in single bytes and in random pieces gives
//    deltas that add up to the same; every non-final parse of a prefix extends the previous.
//  - expect_round_trip: a conversation whose last assistant message calls tools is rendered
//    through a real model's chat template (a golden file in ../shared/chat-templates/), the
//    text the model would have generated is cut out, and the format must parse the same calls
//    back from it.
//  - parse_streamed / round_trip: the same promises checked on parse() alone, for tests that
//    then look at the result themselves.
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "toolcall/output_format.h"
#include "toolcall/output_parser.h"

namespace baton::toolcall::testing {

struct CheckOptions {
  // Markup comes back raw as content (a malformed call, or reasoning markers with reasoning
  // off): the checks for markup in content and the final parse's monotonicity are off.
  bool markup_is_content = false;
};

// Calls in `expected` with an empty id: the format has none of its own (the streamed calls then
// must carry a made-up "call_…" id). Arguments are compared as parsed JSON.
void expect_parses(const OutputFormat& format, std::string_view text, const ParsedOutput& expected,
                   CheckOptions options = {});

// Only the streaming check (b), through OutputParser with the given reasoning options; format
// may be null (no tools).
void expect_streams(const OutputFormat* format, const ReasoningOptions& reasoning,
                    std::string_view text, const ParsedOutput& expected, CheckOptions options = {});

// Only the monotonicity check (c).
void expect_monotonic(const OutputFormat& format, std::string_view text, CheckOptions options = {});

// A malformed call: streaming may already have shown it (OutputParser never takes a delta
// back), so only the final parse must return it raw as content, with no call.
void expect_malformed(const OutputFormat& format, const std::string& text);

// A ParsedOutput for expectations: call(name, R"({"a": 1})") etc.
ToolCall call(std::string name, std::string arguments, std::string id = "");
ParsedOutput output(std::string content, std::vector<ToolCall> calls = {},
                    std::string reasoning = "");

struct RoundTripCall {
  std::string name;
  nlohmann::ordered_json arguments;
  std::string id = "abcDEF123";  // 9 letters and digits, as Mistral's templates demand
};

struct RoundTripOptions {
  std::string content;  // the assistant message's content next to its calls
  // The model's reasoning, put in front of the cut-out text when the generation prompt opens a
  // reasoning block (the history does not show it).
  std::string reasoning = "I should call the tool.";
  std::vector<std::string> end_markers;  // end-of-turn texts beyond the usual ones
  bool with_tools = true;                // the context has `tools` (the usual two)
  nlohmann::ordered_json extra_context = nlohmann::ordered_json::object();  // template variables
};

// The default conversation's calls: get_weather (and search_files when `two`).
std::vector<RoundTripCall> weather_calls(bool two);

// Skips the test (GTEST_SKIP) when ../shared is missing; fails when the file is missing.
void expect_round_trip(const std::string& golden_file, std::string_view format_name,
                       const std::vector<RoundTripCall>& calls,
                       const RoundTripOptions& options = {});

// ---- Checks on parse() alone, and a second round trip, with typed arguments ----------------

// Parses `text` whole and after each of its prefixes: every non-final parse must be extended by
// the next one and by the final parse (as expect_monotonic, without its check for markup in
// content). Returns the final parse, for the caller's own expectations.
ParsedOutput parse_streamed(const OutputFormat& format, std::string_view text);

// `call` is named `name` and its arguments equal `args` as JSON.
void expect_call(const ToolCall& call, const std::string& name, const std::string& args);

// Tools whose schemas type every argument (integer, boolean, object), for formats that convert
// their arguments by the schema (build them with these as FormatContext::tools).
nlohmann::ordered_json round_trip_tools();
// The one tool the single-family tests call: get_weather(city: string, days: integer).
nlohmann::ordered_json weather_tool();
// make_format(name) for a request offering `tools`; a failed expectation when it has no format.
std::unique_ptr<OutputFormat> make_with_tools(std::string_view name,
                                              nlohmann::ordered_json tools = {});

// A golden file's template source.
std::string read_source(const std::filesystem::path& path);

struct RoundTrip {
  std::string template_file;             // under ../shared/chat-templates
  std::vector<std::string> end_markers;  // the assistant's text ends before the first of these
  std::vector<std::string> think_ends = {"</think>", "</mm:think>"};
  bool objects = true;  // whether the template writes object arguments as JSON
  // Where the message is not rendered after the generation prompt (Command R+ ends the prompt
  // with a system turn): the message starts after this marker.
  std::string starts_after = "";
};

// Renders two conversations with round_trip_tools() (content and two calls; no content and one
// call whose arguments hold Unicode, a boolean and a nested object) and parses the assistant's
// text back with parse_streamed: the same calls, and the content where the template wrote it.
// Unlike expect_round_trip, the text is cut at the first end marker and `format` is the
// caller's, so a format that needs the request's tools gets them.
void round_trip(const OutputFormat& format, const RoundTrip& rt);

}  // namespace baton::toolcall::testing
