#pragma once
// The GBNF literal that matches exactly some bytes, the one escaper of the grammar text the
// project writes (JSON schemas, regexes' literal runs excepted: they spell non-ASCII as \u for
// readable logs; tool-call grammars; response choices).
#include <fmt/format.h>

#include <string>
#include <string_view>

namespace baton::util {

// Quoted, with " and \ escaped and control bytes written \xHH (what the grammar parser reads
// back as the same bytes); other bytes, UTF-8 included, as they are.
inline std::string gbnf_literal(std::string_view bytes) {
  std::string out = "\"";
  for (unsigned char c : bytes) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7F) {
      out += fmt::format("\\x{:02X}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

}  // namespace baton::util
