// `baton bench grammar -m MODEL [--schema FILE] [-n 128] [--runs 5]`: what a token mask costs
// a constrained row, set against the decode step it rides on, measured in the same run.
// Each run decodes n tokens at temperature 1 under the schema's grammar; the mask (trie walk or
// cache hit, plus the matcher's advance) and the forward pass are timed separately.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>
#include <vector>

#include "cli/commands.h"
#include "engine/llama_engine.h"
#include "engine/sampler.h"
#include "grammar/json_schema.h"
#include "grammar/token_mask.h"
#include "tokenizer/tokenizer_codec.h"

namespace baton::cli {
namespace {

// A response shape agents ask for: nested objects, an array of objects, enums, bounded numbers.
constexpr const char* kDefaultSchema = R"({
  "type": "object",
  "properties": {
    "title": {"type": "string", "maxLength": 60},
    "status": {"enum": ["open", "closed", "blocked"]},
    "priority": {"type": "integer", "minimum": 1, "maximum": 5},
    "tasks": {"type": "array", "maxItems": 4, "items": {
      "type": "object",
      "properties": {"name": {"type": "string", "maxLength": 40}, "done": {"type": "boolean"},
                     "hours": {"type": "number", "minimum": 0, "maximum": 100}},
      "required": ["name", "done"], "additionalProperties": false}},
    "owner": {"type": "object", "properties": {"email": {"type": "string", "format": "email"}},
              "required": ["email"], "additionalProperties": false}
  },
  "required": ["title", "status", "priority", "tasks", "owner"],
  "additionalProperties": false
})";

struct Args {
  std::string model;
  std::string schema_file;
  int32_t gen = 128;
  int32_t runs = 5;
  engine::EngineOptions engine;
};

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct RunFigures {
  double step_ms = 0;  // forward + sample, median over steps
  double mask_ms = 0;  // mask + advance, median over steps
  double mask_max_ms = 0;
  int32_t tokens = 0;
  bool complete = false;
};

RunFigures one_run(engine::LlamaEngine& eng, const std::shared_ptr<const grammar::Grammar>& g,
                   const std::shared_ptr<const grammar::VocabTrie>& vocab, const Args& a,
                   uint64_t seed) {
  const auto info = eng.info();
  grammar::TokenMatcher tm(g, vocab);
  engine::SamplingParams sp;
  sp.seed = seed;
  engine::Sampler sampler(sp);
  engine::SeqChunk c;
  c.request_id = 1;
  c.block_table.resize((8 + a.gen + info.block_size) / info.block_size);
  std::iota(c.block_table.begin(), c.block_table.end(), 0);
  c.tokens = {info.bos_id >= 0 ? info.bos_id : 1};
  std::vector<int32_t> history = c.tokens;
  std::vector<double> steps, masks;
  RunFigures f;
  for (int32_t k = 0; k < a.gen; ++k) {
    c.start_pos = k;
    c.want_logits = true;
    engine::StepBatch b;
    b.seqs.push_back(c);
    engine::StepOutput out;
    auto t0 = std::chrono::steady_clock::now();
    eng.forward(b, out);
    const double fwd = ms_since(t0);
    t0 = std::chrono::steady_clock::now();
    const auto& allowed = tm.allowed();
    const double mask = ms_since(t0);
    t0 = std::chrono::steady_clock::now();
    const auto s = sampler.sample(out.logits[0].data(), info.n_vocab, history, &allowed);
    const double sample = ms_since(t0);
    t0 = std::chrono::steady_clock::now();
    if (s.id < 0 || !tm.accept(s.id)) break;
    const double advance = ms_since(t0);
    steps.push_back(fwd + sample);
    masks.push_back(mask + advance);
    f.mask_max_ms = std::max(f.mask_max_ms, mask + advance);
    ++f.tokens;
    if (tm.must_end() || tm.is_eog(s.id)) {
      f.complete = true;
      break;
    }
    c.tokens = {s.id};
    history.push_back(s.id);
  }
  f.step_ms = median(steps);
  f.mask_ms = median(masks);
  return f;
}

void run(const Args& a) {
  nlohmann::ordered_json schema;
  if (a.schema_file.empty()) {
    schema = nlohmann::ordered_json::parse(kDefaultSchema);
  } else {
    std::ifstream in(a.schema_file);
    if (!in) throw std::runtime_error("bench grammar: cannot read " + a.schema_file);
    schema = nlohmann::ordered_json::parse(in);
  }
  auto t0 = std::chrono::steady_clock::now();
  auto g = grammar::Grammar::parse(grammar::json_schema_to_gbnf(schema));
  const double compile_ms = ms_since(t0);
  auto eng = engine::load_llama_engine(a.model, a.engine);
  const auto info = eng->info();
  eng->allocate_kv((8 + a.gen + info.block_size) / info.block_size + 1);
  tokenizer::TokenizerCodec codec(eng->tokenizer());
  t0 = std::chrono::steady_clock::now();
  std::vector<std::string> bytes(info.n_vocab);
  for (int32_t id = 0; id < info.n_vocab; ++id) bytes[id] = codec.token_bytes(id);
  auto vocab = std::make_shared<grammar::VocabTrie>(bytes, codec.eog_tokens());
  const double trie_ms = ms_since(t0);
  std::vector<double> ratio, step, mask, worst;
  for (int32_t r = 0; r < a.runs; ++r) {
    RunFigures f = one_run(*eng, g, vocab, a, 1000 + r);
    std::fprintf(stderr, "run %d: %d tokens%s, step %.2f ms, mask %.3f ms (worst %.2f ms)\n", r + 1,
                 f.tokens, f.complete ? " (complete)" : "", f.step_ms, f.mask_ms, f.mask_max_ms);
    step.push_back(f.step_ms);
    mask.push_back(f.mask_ms);
    worst.push_back(f.mask_max_ms);
    ratio.push_back(f.step_ms > 0 ? f.mask_ms / f.step_ms : 0);
  }
  std::printf("model            %s (%d-token vocabulary, %zu trie nodes)\n", a.model.c_str(),
              info.n_vocab, vocab->nodes().size());
  std::printf("schema compile   %.2f ms; vocabulary trie %.1f ms (once per model)\n", compile_ms,
              trie_ms);
  std::printf("decode step      %.2f ms (median of %d runs)\n", median(step), a.runs);
  std::printf("mask per step    %.3f ms (median), worst step %.2f ms (median of runs)\n",
              median(mask), median(worst));
  std::printf("mask / step      %.2f%% (median of runs; target <= 10%%)\n", 100 * median(ratio));
}

}  // namespace

void register_bench_grammar(CLI::App& bench) {
  auto a = std::make_shared<Args>();
  auto* cmd = bench.add_subcommand("grammar", "cost of a structured-output token mask per step");
  cmd->add_option("-m,--model", a->model, "model .gguf file")->required();
  cmd->add_option("--schema", a->schema_file, "JSON Schema file (default: a built-in nested one)");
  cmd->add_option("-n,--gen-tokens", a->gen, "decode steps per run")->capture_default_str();
  cmd->add_option("--runs", a->runs, "runs (medians are reported)")->capture_default_str();
  cmd->add_option("--threads", a->engine.threads, "compute threads (0 = all cores)")
      ->capture_default_str();
  cmd->callback([a] { run(*a); });
}

}  // namespace baton::cli
