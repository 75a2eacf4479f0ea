// libFuzzer entry: any byte string must either open as a GGUF file or raise GgufError. Whatever
// opens is then walked through every accessor `baton gguf info` and the loaders use.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "gguf/gguf_file.h"
#include "gguf/gguf_info.h"

namespace {

void walk(const baton::gguf::GgufFile& f) {
  volatile size_t sink = baton::gguf::format_info(f).size();
  for (const auto& [key, value] : f.metadata()) {
    sink = sink + value.to_display(4).size();
    try {
      sink = sink + static_cast<size_t>(f.get_int(key));
    } catch (const baton::gguf::GgufError&) {
    }
    try {
      sink = sink + f.get_strings(key).size() + f.get_ints(key).size();
    } catch (const baton::gguf::GgufError&) {
    }
  }
  for (const auto& t : f.tensors()) {
    // Touch the first and last byte: ASan reports it if validation let a tensor stick out. A
    // tensor with a zero dimension is valid and has no bytes to touch.
    if (t.n_bytes == 0) continue;
    const uint8_t* p = f.tensor_data(t);
    sink = sink + p[0] + p[t.n_bytes - 1];
  }
  (void)sink;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto f = baton::gguf::GgufFile::from_memory(data, size, "fuzz.gguf");
    walk(*f);
  } catch (const baton::gguf::GgufError&) {
    // Refusing bad input with a message is the expected outcome.
  }
  return 0;
}
