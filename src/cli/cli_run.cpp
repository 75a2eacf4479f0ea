// `baton run -m MODEL [-p PROMPT] [-n N] [sampling flags] [--json]`: one generation on the CPU
// engine, text streamed to stdout, speeds to stderr.
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/commands.h"
#include "cli/kv_type_flags.h"
#include "constraint/constraint_compiler.h"
#include "engine/generate.h"
#include "engine/llama_engine.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_codec.h"

namespace baton::cli {
namespace {

struct RunArgs {
  std::string model;
  std::string prompt;
  int32_t n = 128;
  bool json = false;
  bool ignore_eos = false;
  engine::EngineOptions engine;
  engine::SamplingParams sampling;
  std::string grammar_file, schema_file, regex;
};

std::string read_file(const std::string& path, const char* flag) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(std::string("run: cannot read ") + flag + " " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// --grammar / --json-schema / --regex: the same structured output as the server's fields.
constraint::ConstraintSpec constraint_spec(const RunArgs& a) {
  constraint::ConstraintSpec spec;
  const int given = !a.grammar_file.empty() + !a.schema_file.empty() + !a.regex.empty();
  if (given > 1) throw std::runtime_error("run: give one of --grammar, --json-schema, --regex");
  if (!a.grammar_file.empty()) {
    spec.kind = constraint::ConstraintSpec::Kind::Grammar;
    spec.text = read_file(a.grammar_file, "--grammar");
    spec.field = "--grammar";
  } else if (!a.schema_file.empty()) {
    spec.kind = constraint::ConstraintSpec::Kind::JsonSchema;
    try {
      spec.schema = nlohmann::ordered_json::parse(read_file(a.schema_file, "--json-schema"));
    } catch (const nlohmann::json::parse_error& e) {
      throw std::runtime_error("run: --json-schema " + a.schema_file + " is not JSON: " + e.what());
    }
    spec.field = "--json-schema";
  } else if (!a.regex.empty()) {
    spec.kind = constraint::ConstraintSpec::Kind::Regex;
    spec.text = a.regex;
    spec.field = "--regex";
  }
  return spec;
}

double per_s(double n, double ms) {
  return ms > 0 ? n * 1000.0 / ms : 0.0;
}

void run_generate(const RunArgs& a) {
  if (a.n < 0) throw std::runtime_error("run: -n must be >= 0");
  constraint_spec(a);  // flag errors before the model loads
  auto eng = engine::load_llama_engine(a.model, a.engine);
  const auto& tok = eng->tokenizer();
  std::vector<int32_t> prompt;
  if (!a.prompt.empty()) prompt = tok.encode(a.prompt, tok.add_bos());
  if (prompt.empty()) {
    if (tok.bos_id() < 0) {
      throw std::runtime_error(a.model +
                               ": the vocabulary has no BOS token; give a prompt with -p");
    }
    prompt.push_back(tok.bos_id());
  }
  engine::GenerateOptions go;
  tokenizer::TokenizerCodec codec(tok);
  constraint::ConstraintCompiler compiler(codec);
  std::shared_ptr<engine::TokenConstraint> constraint;
  if (const auto spec = constraint_spec(a); spec.active()) {
    constraint = compiler.make(compiler.compile(spec), {}, a.n);
    go.constraint = constraint.get();
    constraint::require_room(*constraint, a.n, "-n");
  }
  go.max_tokens = a.n;
  go.stop_at_eog = !a.ignore_eos;
  go.sampling = a.sampling;
  // Primed with the prompt so the first generated piece keeps its leading space when it
  // continues a prompt (and loses it when it starts the text after BOS).
  tokenizer::StreamDecoder stream(tok);
  for (int32_t id : prompt) stream.push(id);
  std::string text;
  auto on_token = [&](int32_t id) {
    const std::string piece = stream.push(id);
    text += piece;
    if (a.json) return;
    std::fwrite(piece.data(), 1, piece.size(), stdout);
    std::fflush(stdout);
  };
  const auto res = engine::generate(*eng, prompt, go, on_token);
  const double ptps = per_s(static_cast<double>(prompt.size()), res.prompt_ms);
  const double gtps = per_s(static_cast<double>(res.tokens.size()), res.gen_ms);
  if (a.json) {
    nlohmann::json j;
    j["tokens"] = res.tokens;
    j["text"] = text + stream.flush();
    j["prompt_tokens"] = prompt.size();
    j["stopped_at_eog"] = res.stopped_at_eog;
    j["complete"] = res.complete;
    j["timings"] = {{"prompt_ms", res.prompt_ms},
                    {"gen_ms", res.gen_ms},
                    {"prompt_tok_s", ptps},
                    {"gen_tok_s", gtps}};
    std::printf("%s\n", j.dump().c_str());
  } else {
    const std::string rest = stream.flush();
    std::fwrite(rest.data(), 1, rest.size(), stdout);
    std::printf("\n");
  }
  std::fflush(stdout);
  std::fprintf(stderr,
               "prompt: %zu tokens in %.1f ms (%.1f tok/s); generation: %zu tokens in %.1f "
               "ms (%.1f tok/s)\n",
               prompt.size(), res.prompt_ms, ptps, res.tokens.size(), res.gen_ms, gtps);
}

}  // namespace

void register_run(CLI::App& app) {
  auto a = std::make_shared<RunArgs>();
  // llama.cpp's defaults, so outputs are comparable.
  a->sampling.temperature = 0.8f;
  a->sampling.top_k = 40;
  a->sampling.top_p = 0.95f;
  a->sampling.min_p = 0.05f;
  a->sampling.seed = 0xBA7011;
  auto* cmd = app.add_subcommand("run", "generate text from a prompt on the CPU engine");
  auto& s = a->sampling;
  cmd->add_option("-m,--model", a->model, "model .gguf file")->required();
  cmd->add_option("-p,--prompt", a->prompt, "prompt text (default: start from BOS)");
  cmd->add_option("-n,--n-predict", a->n, "tokens to generate")->capture_default_str();
  cmd->add_option("--temp", s.temperature, "temperature (0 = greedy)")->capture_default_str();
  cmd->add_option("--top-k", s.top_k, "keep the k most likely (0 = off)")->capture_default_str();
  cmd->add_option("--top-p", s.top_p, "nucleus mass (1 = off)")->capture_default_str();
  cmd->add_option("--min-p", s.min_p, "drop below min-p × best (0 = off)")->capture_default_str();
  cmd->add_option("--repeat-penalty", s.repetition_penalty, "1 = off")->capture_default_str();
  cmd->add_option("--presence-penalty", s.presence_penalty)->capture_default_str();
  cmd->add_option("--frequency-penalty", s.frequency_penalty)->capture_default_str();
  cmd->add_option("--repeat-last-n", s.penalty_last_n, "penalty window")->capture_default_str();
  cmd->add_option("--seed", s.seed, "sampling seed")->capture_default_str();
  cmd->add_option("--threads", a->engine.threads, "compute threads (0 = all cores)")
      ->capture_default_str();
  cmd->add_option("--kv-type", a->engine.kv_type,
                  "KV cache type of keys and values alike (see -ctk, -ctv)")
      ->capture_default_str();
  add_kv_type_flags(cmd, a->engine);
  cmd->add_option("--grammar", a->grammar_file, "constrain the output to a GBNF grammar file");
  cmd->add_option("--json-schema", a->schema_file, "constrain the output to a JSON Schema file");
  cmd->add_option("--regex", a->regex, "constrain the output to a regex (whole output)");
  cmd->add_flag("--ignore-eos", a->ignore_eos, "keep going past end-of-generation tokens");
  cmd->add_flag("--json", a->json, "print one JSON object {tokens, text, prompt_tokens, timings}");
  cmd->callback([a] { run_generate(*a); });
}

}  // namespace baton::cli
