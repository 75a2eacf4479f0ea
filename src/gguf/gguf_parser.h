#pragma once
// Internal: fills a GgufFile from its bytes (base_/size_/path_ already set), validating every
// field before it is used. Shared by open() (mmap) and from_memory().
#include "gguf/gguf_file.h"

namespace baton::gguf {

// Sanity caps: far above anything a real model uses, low enough that a hostile header cannot
// make the reader allocate gigabytes before it notices the file is too short.
inline constexpr uint64_t kMaxKeyLength = 64 * 1024;
inline constexpr uint64_t kMaxStringLength = 256ull * 1024 * 1024;
inline constexpr uint64_t kMaxArrayLength = 64ull * 1024 * 1024;
inline constexpr uint64_t kMaxTensorNameLength = 256;
inline constexpr uint64_t kMaxTensors = 1u << 20;
inline constexpr uint64_t kMaxKv = 1u << 20;
inline constexpr uint64_t kMaxAlignment = 1u << 20;
inline constexpr int kMaxArrayDepth = 4;

class GgufParser {
 public:
  static void parse(GgufFile& f);
};

}  // namespace baton::gguf
