#pragma once
// Chat templates rendered exactly as Hugging Face `transformers` renders them
// (`apply_chat_template`): the template runs in the reference engine itself, Jinja2 3.1, embedded
// through the CPython C API. docs/ARCHITECTURE.md ("Chat templates") says why.
//
// Thread safety: every call may come from any thread. The interpreter starts lazily on the first
// from_text() and lives for the rest of the process; calls serialise on its global lock (GIL).
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

namespace baton::chat {

// One line: "UndefinedError: 'x' is undefined", "TemplateError: <raise_exception's message>",
// "TemplateSyntaxError: ... (line 3)", or what was wrong with the context or the options.
class TemplateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A rendering stopped by its budget (RenderOptions): the template, not the request, is at fault.
// The interpreter stays usable.
class TemplateBudgetError : public TemplateError {
 public:
  using TemplateError::TemplateError;
};

struct RenderOptions {
  // The time `strftime_now(fmt)` formats, ISO 8601 (Python's datetime.fromisoformat). Fixed by
  // default so that a rendering never depends on today's date; the server passes the real time.
  std::string now = "2024-07-26T12:00:00";
  // A rendering running longer is stopped (TemplateBudgetError); 0: no limit. Templates take
  // milliseconds; one that loops holds the interpreter's lock, and every other rendering waits.
  std::chrono::milliseconds time_limit{10000};
  // Most characters a rendering may produce or build in one value; 0: 8 × the context's JSON
  // plus 1 MiB (a prompt is the messages and tools with some markup around them).
  size_t max_output_chars = 0;
};

class ChatTemplate {
 public:
  // Compiles the template (throws TemplateError on a syntax error). Compiled templates are cached
  // by source, so building one per request for the same text costs a map lookup.
  static ChatTemplate from_text(std::string source);

  // Renders with the context's keys as the template's variables (`messages`,
  // `add_generation_prompt`, `bos_token`, `eos_token`, `tools`, any extra keys). The context is an
  // ordered_json because key order is visible to templates (`tojson`, `items()`, `for k in d`),
  // and nlohmann::json would sort the keys. Throws TemplateError.
  std::string render(const nlohmann::ordered_json& context,
                     const RenderOptions& options = {}) const;
  // Same, from the context's JSON text as given (parsed by Python's json.loads, as the reference
  // renderer's callers do), which must be a JSON object.
  std::string render_json(std::string_view context_json, const RenderOptions& options = {}) const;

  const std::string& source() const;

  struct Compiled;  // the Python template object; defined in chat_template.cpp

 private:
  explicit ChatTemplate(std::shared_ptr<const Compiled> c) : compiled_(std::move(c)) {}
  std::shared_ptr<const Compiled> compiled_;
};

}  // namespace baton::chat
