#pragma once
// --cache-type-k / --cache-type-v (llama.cpp's -ctk / -ctv) for the commands that load a model,
// checked as they are parsed so a typo fails before a load.
#include <CLI/CLI.hpp>

#include "engine/llama_engine.h"

namespace baton::cli {

void add_kv_type_flags(CLI::App* cmd, engine::EngineOptions& eo);

}  // namespace baton::cli
