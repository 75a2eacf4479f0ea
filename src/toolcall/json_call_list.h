#pragma once
// A JSON array of call objects, as Firefunction (functools[...]) and Mistral Nemo
// ([TOOL_CALLS][...]) write their calls, read from text that may stop anywhere.
#include <cstddef>
#include <string_view>
#include <vector>

#include "toolcall/json_call.h"
#include "toolcall/output_format.h"

namespace baton::toolcall::json {

struct CallList {
  Status status = Status::partial;  // of the whole array
  size_t end = 0;                   // as Scan::end
  // Complete calls, then (partial or invalid) the last one if its name is known, and with
  // `need_id` its id too, or its object is complete.
  std::vector<ToolCall> calls;
  bool last_open = false;
};

// The array whose '[' is at `pos` (leading whitespace skipped). With `need_id`, a call is only
// shown once its id is known, so that the model's id (which may follow the arguments) is the
// one streamed.
CallList scan_call_list(std::string_view text, size_t pos, const CallKeys& keys, bool need_id);

}  // namespace baton::toolcall::json
