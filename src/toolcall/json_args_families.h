#pragma once
// The families JsonArgsFormat reads, one spec each.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "toolcall/json_args_format.h"

namespace baton::toolcall {

std::optional<JsonArgsSpec> json_args_family_spec(std::string_view name);
std::vector<std::string> json_args_family_names();

}  // namespace baton::toolcall
