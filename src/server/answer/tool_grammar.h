#pragma once
// The grammar of a forced tool call (tool_choice "required" or a named function): the model
// family's own call markup around arguments that validate against the tool's parameters, after
// a reasoning block when the model thinks first.
#include <string>

#include "server/api/chat_schema.h"
#include "toolcall/output_format.h"
#include "toolcall/output_parser.h"

namespace baton::server {

// The whole GBNF text; "" when the format cannot be constrained. Throws grammar::GrammarError
// (a tool's parameters use a schema feature that a grammar cannot enforce).
std::string forced_call_gbnf(const toolcall::OutputFormat& format, const ChatFields& req,
                             const toolcall::ReasoningOptions& reasoning);
// tool_choice "auto": the grammar of one call to any of the tools, from the format's
// call_trigger() on; "" when the format has none.
std::string auto_call_gbnf(const toolcall::OutputFormat& format, const ChatFields& req);

}  // namespace baton::server
