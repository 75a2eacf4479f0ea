#include "gguf/gguf_parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "gguf/gguf_cursor.h"

namespace baton::gguf {
namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32

// Smallest number of bytes one element of this type occupies in the file; used to reject array
// counts the remaining bytes cannot possibly hold before allocating for them.
uint64_t min_element_bytes(ValueType t) {
  switch (t) {
    case ValueType::UINT8:
    case ValueType::INT8:
    case ValueType::BOOL:
      return 1;
    case ValueType::UINT16:
    case ValueType::INT16:
      return 2;
    case ValueType::UINT32:
    case ValueType::INT32:
    case ValueType::FLOAT32:
      return 4;
    case ValueType::STRING:
      return 8;
    case ValueType::ARRAY:
      return 12;
    default:
      return 8;
  }
}

class ValueReader {
 public:
  explicit ValueReader(Cursor& c) : c_(c) {}

  ValueType read_type(const std::string& field) {
    uint32_t raw = c_.read<uint32_t>(field);
    if (raw > static_cast<uint32_t>(ValueType::FLOAT64)) {
      c_.fail(field, fmt::format("a value type 0..12, got {}", raw));
    }
    return static_cast<ValueType>(raw);
  }

  MetaValue read_value(ValueType t, const std::string& field, int depth) {
    MetaValue v;
    v.type = t;
    switch (t) {
      case ValueType::UINT8:
        set_unsigned(v, c_.read<uint8_t>(field));
        break;
      case ValueType::UINT16:
        set_unsigned(v, c_.read<uint16_t>(field));
        break;
      case ValueType::UINT32:
        set_unsigned(v, c_.read<uint32_t>(field));
        break;
      case ValueType::UINT64:
        set_unsigned(v, c_.read<uint64_t>(field));
        break;
      case ValueType::INT8:
        set_signed(v, c_.read<int8_t>(field));
        break;
      case ValueType::INT16:
        set_signed(v, c_.read<int16_t>(field));
        break;
      case ValueType::INT32:
        set_signed(v, c_.read<int32_t>(field));
        break;
      case ValueType::INT64:
        set_signed(v, c_.read<int64_t>(field));
        break;
      case ValueType::FLOAT32:
        v.f = c_.read<float>(field);
        break;
      case ValueType::FLOAT64:
        v.f = c_.read<double>(field);
        break;
      case ValueType::BOOL: {
        uint8_t b = c_.read<uint8_t>(field);
        if (b > 1) c_.fail(field, fmt::format("a bool 0 or 1, got {}", b));
        v.b = b != 0;
        v.i = b;
        v.u = b;
        break;
      }
      case ValueType::STRING:
        v.str = c_.read_string(field, kMaxStringLength);
        break;
      case ValueType::ARRAY:
        read_array(v, field, depth);
        break;
    }
    return v;
  }

 private:
  static void set_unsigned(MetaValue& v, uint64_t x) {
    v.u = x;
    v.i = x <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ? static_cast<int64_t>(x)
                                                                          : 0;
  }
  static void set_signed(MetaValue& v, int64_t x) {
    v.i = x;
    v.u = x >= 0 ? static_cast<uint64_t>(x) : 0;
  }

  void read_array(MetaValue& v, const std::string& field, int depth) {
    if (depth >= kMaxArrayDepth) {
      c_.fail(field, fmt::format("arrays nested at most {} deep", kMaxArrayDepth));
    }
    v.array_type = read_type(field + " element type");
    uint64_t n = c_.read<uint64_t>(field + " array length");
    if (n > kMaxArrayLength) {
      c_.fail(field, fmt::format("an array of at most {} items, got {}", kMaxArrayLength, n));
    }
    if (n > c_.remaining() / min_element_bytes(v.array_type)) {
      c_.fail(field, fmt::format("{} array items but only {} bytes remain (truncated?)", n,
                                 c_.remaining()));
    }
    const ValueType et = v.array_type;
    bool unsigned64 = et == ValueType::UINT64;
    for (uint64_t k = 0; k < n; ++k) {
      MetaValue e = read_value(et, field, depth + 1);
      if (is_integer_type(et) || et == ValueType::BOOL) {
        if (unsigned64) v.uints.push_back(e.u);
        if (!unsigned64 || e.u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
          v.ints.push_back(et == ValueType::BOOL ? e.b : e.i);
        }
      } else if (et == ValueType::FLOAT32 || et == ValueType::FLOAT64) {
        v.floats.push_back(e.f);
      } else if (et == ValueType::STRING) {
        v.strings.push_back(std::move(e.str));
      } else {
        v.nested.push_back(std::move(e));
      }
    }
    // A uint64 array with an item above INT64_MAX keeps only the exact uints.
    if (unsigned64 && v.ints.size() != v.uints.size()) v.ints.clear();
  }

  Cursor& c_;
};

void check_count(Cursor& c, const char* field, uint64_t n, uint64_t max, uint64_t min_bytes) {
  if (n > max) c.fail(field, fmt::format("at most {}, got {}", max, n));
  if (n > c.remaining() / min_bytes) {
    c.fail(field,
           fmt::format("{} records to fit in the {} bytes left (truncated?)", n, c.remaining()));
  }
}

void read_header(Cursor& c, uint32_t& version, uint64_t& n_tensors, uint64_t& n_kv) {
  uint32_t magic = c.read<uint32_t>("magic");
  if (magic != kMagic) c.fail("magic", "the bytes 'GGUF' at offset 0 (is this a GGUF file?)");
  version = c.read<uint32_t>("version");
  if (version == 1) {
    c.fail("version",
           "2 or 3, got 1: GGUF version 1 is not supported; re-convert the model "
           "with a current llama.cpp converter");
  }
  if (version >= 0x01000000 && (version & 0xFFFF) == 0) {
    c.fail("version", fmt::format("2 or 3, got 0x{:08x}: this looks like a big-endian GGUF file, "
                                  "which baton does not read; convert it to little-endian",
                                  version));
  }
  if (version != 2 && version != 3) c.fail("version", fmt::format("2 or 3, got {}", version));
  n_tensors = c.read<uint64_t>("tensor count");
  n_kv = c.read<uint64_t>("metadata count");
  // Each tensor record needs at least 8+1+4+8+4+8 bytes, each kv at least 8+1+4+1.
  check_count(c, "tensor count", n_tensors, kMaxTensors, 33);
  check_count(c, "metadata count", n_kv, kMaxKv, 14);
}

void validate_tensor(Cursor& c, TensorInfo& t, uint64_t alignment, uint64_t data_offset,
                     uint64_t file_size) {
  const std::string field = fmt::format("tensor '{}'", printable(t.name));
  const TypeTraits tr = traits(t.type);
  // Element counts above 2^62 cannot be real and keep every product below from overflowing.
  constexpr uint64_t kMaxElems = 1ull << 62;
  uint64_t n = 1;
  for (uint64_t d : t.dims) {
    if (d == 0) c.fail(field + " dims", "non-zero dimensions");
    if (d > kMaxElems / n) c.fail(field + " dims", "an element count below 2^62");
    n *= d;
  }
  if (tr.block_bytes == 0) c.fail(field + " type", "a type with a defined size");
  if (t.dims[0] % tr.block_elems != 0) {
    c.fail(field + " dims[0]", fmt::format("a multiple of {} ({} block size), got {}",
                                           tr.block_elems, tr.name, t.dims[0]));
  }
  t.n_elements = n;
  t.n_bytes = n / tr.block_elems * tr.block_bytes;
  if (t.offset % alignment != 0) {
    c.fail(field + " offset",
           fmt::format("a multiple of general.alignment ({}), got {}", alignment, t.offset));
  }
  if (data_offset > file_size || t.offset > file_size - data_offset ||
      t.n_bytes > file_size - data_offset - t.offset) {
    c.fail(field + " offset", fmt::format("the tensor's {} bytes at data offset {} to lie inside "
                                          "the file ({} bytes; truncated?)",
                                          t.n_bytes, t.offset, file_size));
  }
}

void check_overlaps(Cursor& c, const std::vector<TensorInfo>& tensors) {
  std::vector<const TensorInfo*> order;
  order.reserve(tensors.size());
  for (const auto& t : tensors) order.push_back(&t);
  std::sort(order.begin(), order.end(),
            [](const TensorInfo* a, const TensorInfo* b) { return a->offset < b->offset; });
  for (size_t k = 1; k < order.size(); ++k) {
    const TensorInfo& prev = *order[k - 1];
    if (prev.offset + prev.n_bytes > order[k]->offset) {
      c.fail(fmt::format("tensor '{}' offset", printable(order[k]->name)),
             fmt::format("no overlap with tensor '{}' (bytes {}..{})", printable(prev.name),
                         prev.offset, prev.offset + prev.n_bytes));
    }
  }
}

uint64_t checked_align(Cursor& c, uint64_t pos, uint64_t alignment) {
  uint64_t rem = pos % alignment;
  if (rem == 0) return pos;
  uint64_t pad = alignment - rem;
  if (pos > std::numeric_limits<uint64_t>::max() - pad) c.fail("data offset", "no overflow");
  return pos + pad;
}

}  // namespace

void GgufParser::parse(GgufFile& f) {
  Cursor c(f.base_, static_cast<size_t>(f.size_), f.path_);
  uint64_t n_tensors = 0, n_kv = 0;
  read_header(c, f.version_, n_tensors, n_kv);

  ValueReader values(c);
  f.kv_.reserve(static_cast<size_t>(n_kv));
  for (uint64_t k = 0; k < n_kv; ++k) {
    std::string field = fmt::format("metadata key #{}", k);
    std::string key = c.read_string(field, kMaxKeyLength);
    if (key.empty()) c.fail(field, "a non-empty key");
    field = fmt::format("metadata '{}'", printable(key));
    if (f.kv_index_.count(key)) c.fail(field, "each key once, but it appears twice");
    ValueType t = values.read_type(field + " type");
    MetaValue v = values.read_value(t, field, 0);
    f.kv_index_.emplace(key, f.kv_.size());
    f.kv_.emplace_back(std::move(key), std::move(v));
  }

  if (const MetaValue* a = f.find("general.alignment")) {
    if (!is_integer_type(a->type) || a->i <= 0) {
      c.fail("metadata 'general.alignment'", "a positive integer (usually u32 32)");
    }
    uint64_t al = static_cast<uint64_t>(a->i);
    if ((al & (al - 1)) != 0 || al > kMaxAlignment) {
      c.fail("metadata 'general.alignment'",
             fmt::format("a power of two up to {}, got {}", kMaxAlignment, al));
    }
    f.alignment_ = al;
  }

  f.tensors_.reserve(static_cast<size_t>(n_tensors));
  for (uint64_t k = 0; k < n_tensors; ++k) {
    std::string field = fmt::format("tensor #{} name", k);
    std::string name = c.read_string(field, kMaxTensorNameLength);
    if (name.empty()) c.fail(field, "a non-empty name");
    field = fmt::format("tensor '{}'", printable(name));
    if (f.tensor_index_.count(name)) c.fail(field, "a unique name, but it appears twice");
    uint32_t n_dims = c.read<uint32_t>(field + " n_dims");
    if (n_dims < 1 || n_dims > 4) c.fail(field + " n_dims", fmt::format("1..4, got {}", n_dims));
    TensorInfo t;
    t.name = name;
    for (uint32_t d = 0; d < n_dims; ++d) t.dims.push_back(c.read<uint64_t>(field + " dims"));
    uint32_t raw_type = c.read<uint32_t>(field + " type");
    auto tr = type_traits(raw_type);
    if (!tr) c.fail(field + " type", fmt::format("a known GGML type id, got {}", raw_type));
    t.type = static_cast<TensorType>(raw_type);
    t.offset = c.read<uint64_t>(field + " offset");
    f.tensor_index_.emplace(name, f.tensors_.size());
    f.tensors_.push_back(std::move(t));
  }
  f.data_offset_ = checked_align(c, c.pos(), f.alignment_);
  for (auto& t : f.tensors_) validate_tensor(c, t, f.alignment_, f.data_offset_, f.size_);
  check_overlaps(c, f.tensors_);
}

}  // namespace baton::gguf
