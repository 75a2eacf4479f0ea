#pragma once
// Shared helpers for the tokenizer tests: loading the shared vocabularies and checking UTF-8.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "gguf/gguf_file.h"
#include "support/shared_files.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace baton::tokenizer::testing {

// Loads a shared GGUF's tokenizer once per process (the big vocabularies take a while).
inline const Tokenizer* shared_tokenizer(const std::string& relative) {
  static std::map<std::string, std::unique_ptr<Tokenizer>> cache;
  auto it = cache.find(relative);
  if (it != cache.end()) return it->second.get();
  auto path = ::baton::testing::shared_file(relative);
  std::unique_ptr<Tokenizer> tok;
  if (!path.empty()) {
    auto f = gguf::GgufFile::open(path.string());
    tok = Tokenizer::from_gguf(*f);
  }
  return cache.emplace(relative, std::move(tok)).first->second.get();
}

inline bool valid_utf8(std::string_view s) {
  return utf8::valid_prefix(s) == s.size();
}

inline std::string vocab_path(const std::string& name) {
  return "models/vocab/ggml-vocab-" + name + ".gguf";
}

}  // namespace baton::tokenizer::testing

#define BATON_REQUIRE_TOKENIZER(var, relative)                 \
  const ::baton::tokenizer::Tokenizer* var =                   \
      ::baton::tokenizer::testing::shared_tokenizer(relative); \
  if (!var)                                                    \
  GTEST_SKIP() << "needs ../shared/" << (relative)             \
               << " (not on this machine; set BATON_SHARED_DIR to run)"
