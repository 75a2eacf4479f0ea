#include "cli/kv_type_flags.h"

#include "model/kv_cache.h"

namespace baton::cli {
namespace {

CLI::Validator kv_type_validator() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        if (model::kv_type_from_name(v)) return "";
        return "'" + v + "' is not a KV cache type: use one of " + model::kv_type_names();
      },
      "TYPE");
}

}  // namespace

void add_kv_type_flags(CLI::App* cmd, engine::EngineOptions& eo) {
  const std::string names = model::kv_type_names();
  cmd->add_option("--cache-type-k", eo.cache_type_k,
                  "KV cache type of keys (also -ctk): " + names +
                      " (default f16; q8_0 and q4_0 need a head "
                      "dim that is a multiple of 32)")
      ->check(kv_type_validator());
  cmd->add_option("--cache-type-v", eo.cache_type_v,
                  "KV cache type of values (also -ctv): " + names + " (default f16)")
      ->check(kv_type_validator());
}

}  // namespace baton::cli
