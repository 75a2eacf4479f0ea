#pragma once
// What loading a model file says when it refuses it, for the tests of bad files.
#include <exception>
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

}  // namespace baton::testing
