#pragma once
// A tool call written as one JSON object, {"name": "f", "arguments": {...}} and its variants
// ("parameters" for Llama 3, a trailing "id" for Mistral Nemo), read from text that may stop
// anywhere, so that the call can appear as soon as its name is complete and its arguments can
// stream as the model writes them.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "toolcall/json_scan.h"

namespace baton::toolcall::json {

struct CallKeys {
  std::string_view name = "name";
  std::string_view arguments = "arguments";
  std::string_view alt_arguments = "parameters";  // also accepted; "" for none
  std::string_view id = "";                       // "" when the format has no id
};

struct CallScan {
  Status status = Status::partial;  // of the whole object
  size_t end = 0;                   // as Scan::end
  std::optional<std::string> name;
  std::optional<std::string> id;
  // The arguments' JSON text as far as written: the model's raw text of an object, or, when the
  // model wrote them as a JSON string, its decoded value once complete ("" before). "{}" when
  // the object ended without arguments.
  std::string arguments;
  bool arguments_complete = false;
};

// Scans the call object whose '{' is at `pos` (leading whitespace skipped). Invalid when it is
// not an object, the name is not a string, or the arguments are neither an object nor a string
// holding one.
CallScan scan_call(std::string_view text, size_t pos, const CallKeys& keys = {});

}  // namespace baton::toolcall::json
