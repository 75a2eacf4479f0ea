#pragma once
// The text `baton gguf info` prints: metadata (arrays abbreviated), a tensor table, totals.
#include <string>

#include "gguf/gguf_file.h"

namespace baton::gguf {

std::string format_info(const GgufFile& f, size_t max_array_items = 6);

}  // namespace baton::gguf
