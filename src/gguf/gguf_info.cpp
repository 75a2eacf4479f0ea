#include "gguf/gguf_info.h"

#include <fmt/format.h>

#include <algorithm>

#include "gguf/gguf_cursor.h"

namespace baton::gguf {
namespace {

std::string shape(const TensorInfo& t) {
  std::string s = "[";
  for (size_t k = 0; k < t.dims.size(); ++k) s += fmt::format("{}{}", k ? ", " : "", t.dims[k]);
  return s + "]";
}

std::string type_label(const MetaValue& v) {
  if (v.type != ValueType::ARRAY) return std::string(value_type_name(v.type));
  return fmt::format("{}[{}]", value_type_name(v.array_type), v.array_size());
}

// An integer key of the file's architecture, or -1 when absent or not an integer.
int64_t arch_int(const GgufFile& f, const std::string& arch, const char* key) {
  const std::string k = arch + "." + key;
  const MetaValue* v = f.find(k);
  return v != nullptr && is_integer_type(v->type) ? f.get_int_or(k, -1) : -1;
}

// "experts: ..." for a mixture-of-experts model, else empty.
std::string experts_line(const GgufFile& f) {
  const MetaValue* a = f.find("general.architecture");
  if (a == nullptr || a->type != ValueType::STRING) return "";
  const std::string arch = f.get_string("general.architecture");
  const int64_t n = arch_int(f, arch, "expert_count");
  if (n <= 0) return "";
  const int64_t used = arch_int(f, arch, "expert_used_count");
  const int64_t ff = arch_int(f, arch, "expert_feed_forward_length");
  std::string out = fmt::format("\nexperts: {} per layer", n);
  if (used > 0) out += fmt::format(", {} used per token", used);
  if (ff > 0) out += fmt::format(", expert feed-forward length {}", ff);
  return out + "\n";
}

// "layers: ..." for a hybrid recurrent model (one with ssm.* keys and a layer pattern): which
// layers are recurrent (r) and which attend (a), and the key that says so; else empty.
std::string pattern_line(const GgufFile& f) {
  const MetaValue* a = f.find("general.architecture");
  if (a == nullptr || a->type != ValueType::STRING) return "";
  const std::string arch = f.get_string("general.architecture");
  const int64_t n = arch_int(f, arch, "block_count");
  if (n <= 0 || n > 4096 || arch_int(f, arch, "ssm.state_size") <= 0) return "";
  std::string pattern, source;
  const MetaValue* list = f.find(arch + ".attention.recurrent_layers");
  if (list != nullptr && list->type == ValueType::ARRAY &&
      static_cast<int64_t>(list->ints.size()) == n) {
    for (int64_t v : list->ints) pattern += v != 0 ? 'r' : 'a';
    source = "attention.recurrent_layers";
  } else if (list == nullptr) {
    int64_t every = arch_int(f, arch, "full_attention_interval");
    source = every > 0 ? fmt::format("full_attention_interval {}", every)
                       : "the default full_attention_interval 4";
    if (every <= 0) every = 4;
    for (int64_t i = 0; i < n; ++i) pattern += (i + 1) % every != 0 ? 'r' : 'a';
  } else {
    return fmt::format(
        "\nlayers: attention.recurrent_layers does not give one flag per layer "
        "({} layers)\n",
        n);
  }
  const auto recurrent = std::count(pattern.begin(), pattern.end(), 'r');
  return fmt::format("\nlayers: {} ({} recurrent r, {} attention a; from {})\n", pattern, recurrent,
                     n - recurrent, source);
}

// "attention: ..." for a model with a sliding window, else empty. The layers it applies to
// follow the architecture (gpt-oss: every other layer from 0, gemma3: five of six, or the
// pattern key's period).
std::string window_line(const GgufFile& f) {
  const MetaValue* a = f.find("general.architecture");
  if (a == nullptr || a->type != ValueType::STRING) return "";
  const std::string arch = f.get_string("general.architecture");
  const int64_t w = arch_int(f, arch, "attention.sliding_window");
  if (w <= 0) return "";
  std::string out = fmt::format("\nattention: sliding window of {} positions", w);
  const int64_t period = arch_int(f, arch, "attention.sliding_window_pattern");
  if (period >= 0) {
    out += fmt::format(" (pattern period {})", period);
  } else if (arch == "gpt-oss") {
    out += " in layers 0, 2, 4, ...; the others attend to the whole context";
  } else if (arch == "gemma3") {
    out += " in 5 of every 6 layers; layers 5, 11, 17, ... attend to the whole context";
  }
  return out + "\n";
}

}  // namespace

std::string format_info(const GgufFile& f, size_t max_array_items) {
  std::string out =
      fmt::format("file: {}\nversion: {}  size: {} bytes  alignment: {}  data offset: {}\n",
                  f.path(), f.version(), f.file_size(), f.alignment(), f.data_offset());
  size_t key_w = 0;
  for (const auto& [k, v] : f.metadata()) key_w = std::max(key_w, std::min<size_t>(k.size(), 48));
  out += fmt::format("\nmetadata ({} keys):\n", f.metadata().size());
  for (const auto& [k, v] : f.metadata()) {
    out += fmt::format("  {:<{}}  {:<12}  {}\n", printable(k, 48), key_w, type_label(v),
                       v.to_display(max_array_items));
  }
  out += experts_line(f);
  out += pattern_line(f);
  out += window_line(f);
  size_t name_w = 4;
  for (const auto& t : f.tensors()) name_w = std::max(name_w, t.name.size());
  out += fmt::format("\ntensors ({}):\n", f.tensors().size());
  out += fmt::format("  {:<{}}  {:<5}  {:<24}  {:>12}\n", "name", name_w, "type", "shape", "bytes");
  uint64_t params = 0, bytes = 0;
  for (const auto& t : f.tensors()) {
    out += fmt::format("  {:<{}}  {:<5}  {:<24}  {:>12}\n", printable(t.name, 256), name_w,
                       type_name(t.type), shape(t), t.n_bytes);
    params += t.n_elements;
    bytes += t.n_bytes;
  }
  out += fmt::format("\ntotal: {} tensors, {} params ({:.2f} M), {} bytes ({:.2f} MB)\n",
                     f.tensors().size(), params, params / 1e6, bytes, bytes / 1e6);
  return out;
}

}  // namespace baton::gguf
