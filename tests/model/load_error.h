#pragma once
// What loading a model file says when it refuses it, for the tests of bad files.
#include <gtest/gtest.h>

#include <exception>
#include <initializer_list>
#include <string>

#include "engine/llama_engine.h"

namespace baton::testing {

// The loader's message, or "(no error)" when the file loads.
inline std::string load_error(const std::string& path) {
  try {
    engine::EngineOptions opts;
    opts.threads = 1;
    engine::load_llama_engine(path, opts);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

// A refusal is one line (a log line, a CLI error) that names each of `needles`.
inline void expect_refused(const std::string& msg, std::initializer_list<const char*> needles) {
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  for (const char* n : needles) EXPECT_NE(msg.find(n), std::string::npos) << n << " in: " << msg;
}

}  // namespace baton::testing
