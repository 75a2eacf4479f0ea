#include <fmt/format.h>

#include "gguf/gguf_cursor.h"
#include "gguf/gguf_file.h"

namespace baton::gguf {

std::string_view value_type_name(ValueType t) {
  switch (t) {
    case ValueType::UINT8:
      return "u8";
    case ValueType::INT8:
      return "i8";
    case ValueType::UINT16:
      return "u16";
    case ValueType::INT16:
      return "i16";
    case ValueType::UINT32:
      return "u32";
    case ValueType::INT32:
      return "i32";
    case ValueType::FLOAT32:
      return "f32";
    case ValueType::BOOL:
      return "bool";
    case ValueType::STRING:
      return "string";
    case ValueType::ARRAY:
      return "array";
    case ValueType::UINT64:
      return "u64";
    case ValueType::INT64:
      return "i64";
    case ValueType::FLOAT64:
      return "f64";
  }
  return "unknown";
}

std::string printable(std::string_view s, size_t max_len) {
  std::string out;
  for (size_t k = 0; k < s.size(); ++k) {
    if (out.size() >= max_len) {
      out += "...";
      break;
    }
    unsigned char ch = static_cast<unsigned char>(s[k]);
    if (ch < 0x20 || ch == 0x7f) {
      out += fmt::format("\\x{:02x}", ch);
    } else {
      out += static_cast<char>(ch);
    }
  }
  return out;
}

size_t MetaValue::array_size() const {
  if (type != ValueType::ARRAY) return 0;
  switch (array_type) {
    case ValueType::FLOAT32:
    case ValueType::FLOAT64:
      return floats.size();
    case ValueType::STRING:
      return strings.size();
    case ValueType::ARRAY:
      return nested.size();
    case ValueType::UINT64:
      return uints.size();
    default:
      return ints.size();
  }
}

namespace {

std::string scalar_display(const MetaValue& v) {
  switch (v.type) {
    case ValueType::FLOAT32:
      return fmt::format("{}", static_cast<float>(v.f));  // shortest form of the stored float
    case ValueType::FLOAT64:
      return fmt::format("{}", v.f);
    case ValueType::BOOL:
      return v.b ? "true" : "false";
    case ValueType::STRING:
      return fmt::format("\"{}\"", printable(v.str, 120));
    case ValueType::UINT8:
    case ValueType::UINT16:
    case ValueType::UINT32:
    case ValueType::UINT64:
      return fmt::format("{}", v.u);
    default:
      return fmt::format("{}", v.i);
  }
}

std::string item_display(const MetaValue& v, size_t k) {
  switch (v.array_type) {
    case ValueType::FLOAT32:
      return fmt::format("{}", static_cast<float>(v.floats[k]));
    case ValueType::FLOAT64:
      return fmt::format("{}", v.floats[k]);
    case ValueType::STRING:
      return fmt::format("\"{}\"", printable(v.strings[k], 40));
    case ValueType::ARRAY:
      return v.nested[k].to_display(4);
    case ValueType::UINT64:
      return fmt::format("{}", v.uints[k]);
    case ValueType::BOOL:
      return v.ints[k] ? "true" : "false";
    default:
      return fmt::format("{}", v.ints[k]);
  }
}

}  // namespace

std::string MetaValue::to_display(size_t max_items) const {
  if (type != ValueType::ARRAY) return scalar_display(*this);
  size_t n = array_size();
  std::string out = "[";
  for (size_t k = 0; k < n && k < max_items; ++k) {
    if (k) out += ", ";
    out += item_display(*this, k);
  }
  if (n > max_items) out += ", ...";
  out += fmt::format("] ({} x {})", n, value_type_name(array_type));
  return out;
}

bool is_integer_type(ValueType t) {
  switch (t) {
    case ValueType::UINT8:
    case ValueType::INT8:
    case ValueType::UINT16:
    case ValueType::INT16:
    case ValueType::UINT32:
    case ValueType::INT32:
    case ValueType::UINT64:
    case ValueType::INT64:
      return true;
    default:
      return false;
  }
}

}  // namespace baton::gguf
