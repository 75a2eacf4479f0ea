// `baton bench engine [-m MODEL] [--threads N] [-p 512] [-n 128] [--runs 3] [--json]`: prefill and
// decode speed of the CPU engine, set against this machine's measured memory bandwidth and int8
// peak so the numbers read as "how close to the hardware", and the sampler's time per call, set
// against the decode step it runs after (without a model, only the sampler is measured).
// `--contexts 512,1024,...` instead times one prefill chunk and one decode row at each context
// length, which is where attention's cost over a long KV shows.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "cli/bench_sampler.h"
#include "cli/commands.h"
#include "cli/kv_type_flags.h"
#include "engine/llama_engine.h"
#include "kernels/machine_peak.h"
#include "kernels/matmul.h"

namespace baton::cli {
namespace {

struct BenchArgs {
  std::string model;
  int32_t prompt = 512;
  int32_t gen = 128;
  int32_t runs = 3;
  int32_t chunk = 512;
  int32_t step = 128;
  std::vector<int32_t> contexts;
  bool json = false;
  bool sampler = true;
  engine::EngineOptions engine;
};

struct RunTimes {
  double prefill_tok_s = 0;
  double decode_tok_s = 0;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]));
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int32_t argmax(const std::vector<float>& l) {
  return static_cast<int32_t>(std::max_element(l.begin(), l.end()) - l.begin());
}

// One prefill of `prompt` tokens (in chunks) and `gen` greedy decode steps.
RunTimes one_run(engine::LlamaEngine& eng, const BenchArgs& a, uint32_t salt) {
  const auto info = eng.info();
  engine::SeqChunk c;
  c.request_id = 1;
  c.block_table.resize((a.prompt + a.gen + info.block_size - 1) / info.block_size);
  std::iota(c.block_table.begin(), c.block_table.end(), 0);
  engine::StepOutput out;
  RunTimes t;
  auto t0 = std::chrono::steady_clock::now();
  for (int32_t i = 0; i < a.prompt; i += a.chunk) {
    const int32_t n = std::min(a.chunk, a.prompt - i);
    c.start_pos = i;
    c.tokens.resize(n);
    for (int32_t k = 0; k < n; ++k) c.tokens[k] = ((i + k) * 7919 + salt) % info.n_vocab;
    c.want_logits = i + n == a.prompt;
    engine::StepBatch b;
    b.seqs.push_back(c);
    eng.forward(b, out);
  }
  t.prefill_tok_s = a.prompt / seconds_since(t0);
  int32_t next = out.logits.empty() ? 0 : argmax(out.logits[0]);
  t0 = std::chrono::steady_clock::now();
  for (int32_t k = 0; k < a.gen; ++k) {
    c.start_pos = a.prompt + k;
    c.tokens.assign(1, next);
    c.want_logits = true;
    engine::StepBatch b;
    b.seqs.push_back(c);
    eng.forward(b, out);
    next = argmax(out.logits[0]);
  }
  t.decode_tok_s = a.gen > 0 ? a.gen / seconds_since(t0) : 0;
  return t;
}

// What checking k drafted tokens costs (--speculate): a step of one sequence with 1 + k rows,
// all wanting logits, against a plain decode row at the same context.
struct VerifyCost {
  int32_t rows = 0;
  double ms = 0;
  double ratio = 0;  // ms / a one-row step's ms
};

struct EngineFigures {
  double prefill_tok_s = 0, decode_tok_s = 0, bw_gbs = 0, bw_frac = 0, peak_gops = 0, peak_frac = 0,
         rss_mb = 0, model_mb = 0, bytes_per_token = 0, params_per_token = 0;
  int threads = 0;
  std::vector<VerifyCost> verify;
};

constexpr int32_t kMaxVerifyRows = 8;

// Defined below with the other single-step timings.
std::vector<VerifyCost> bench_verify(engine::LlamaEngine& eng, int32_t at, int32_t runs);

EngineFigures bench_engine(const BenchArgs& a) {
  if (a.prompt < 1 || a.gen < 0 || a.runs < 1 || a.chunk < 1) {
    throw std::runtime_error("bench engine: need -p >= 1, -n >= 0, --runs >= 1, --chunk >= 1");
  }
  auto eng = engine::load_llama_engine(a.model, a.engine);
  const auto info = eng->info();
  const int32_t n_blocks =
      (a.prompt + std::max(a.gen, kMaxVerifyRows) + info.block_size - 1) / info.block_size;
  eng->allocate_kv(n_blocks);
  const auto& w = eng->model().weights();
  uint64_t weight_bytes = 0;
  for (const auto& t : eng->model().file().tensors()) weight_bytes += t.n_bytes;
  const uint64_t kv_bytes = static_cast<uint64_t>(n_blocks) * info.kv_bytes_per_block;

  // One untimed pass first, as llama-bench does: the first forward after loading pays for
  // faulting in weights and scratch memory, which no later token sees.
  {
    BenchArgs warm = a;
    warm.prompt = std::min(a.prompt, a.chunk);
    warm.gen = std::min(a.gen, 2);
    one_run(*eng, warm, 99);
  }
  std::vector<double> pre, dec;
  for (int32_t r = 0; r < a.runs; ++r) {
    const auto t = one_run(*eng, a, static_cast<uint32_t>(r));
    std::fprintf(stderr, "run %d: prefill %.2f tok/s, decode %.2f tok/s\n", r + 1, t.prefill_tok_s,
                 t.decode_tok_s);
    pre.push_back(t.prefill_tok_s);
    dec.push_back(t.decode_tok_s);
  }
  EngineFigures f;
  // The last run left its prompt's KV in place: verify steps start right after it.
  f.verify = bench_verify(*eng, a.prompt, a.runs);
  // Peak RSS before the bandwidth probe, whose 1 GiB buffer would otherwise dominate it.
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  f.rss_mb = ru.ru_maxrss / 1024.0;
  f.bw_gbs = kernels::measure_read_bandwidth_gbs(eng->model().pool());
  f.peak_gops = kernels::measure_int8_peak_gops(eng->model().pool());
  f.prefill_tok_s = median(pre);
  f.decode_tok_s = median(dec);
  f.bytes_per_token = w.matmul_bytes_per_token;
  f.params_per_token = w.matmul_params_per_token;
  f.bw_frac = f.decode_tok_s * f.bytes_per_token / (f.bw_gbs * 1e9);
  f.peak_frac = 2.0 * f.params_per_token * f.prefill_tok_s / (f.peak_gops * 1e9);
  f.model_mb = (weight_bytes + kv_bytes) / 1048576.0;
  f.threads = eng->model().pool().size();
  return f;
}

// Times at one context length: filling the KV up to it, then (medians of runs) one chunk of
// `step` prefill tokens and one decode row starting there.
struct ContextRow {
  int32_t context = 0;
  double fill_ms = 0, chunk_ms = 0, decode_ms = 0, chunk_cpu_ms = 0;
};

// CPU time of every thread of the process: on a shared machine it moves less than wall time.
double process_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

double time_forward_ms(engine::LlamaEngine& eng, engine::SeqChunk& c, int32_t start, int32_t n,
                       int32_t n_vocab, bool logits, int32_t logit_rows = 1) {
  c.start_pos = start;
  c.tokens.resize(n);
  for (int32_t k = 0; k < n; ++k) c.tokens[k] = ((start + k) * 7919 + 17) % n_vocab;
  c.want_logits = logits;
  c.logit_rows = logit_rows;
  engine::StepBatch b;
  b.seqs.push_back(c);
  engine::StepOutput out;
  const auto t0 = std::chrono::steady_clock::now();
  eng.forward(b, out);
  return 1e3 * seconds_since(t0);
}

// Steps of 1, 2, 4 and 8 rows of one sequence at context `at`, every row wanting logits (a decode
// row and its drafts), interleaved over the runs so that drift hits them alike; medians.
std::vector<VerifyCost> bench_verify(engine::LlamaEngine& eng, int32_t at, int32_t runs) {
  const auto info = eng.info();
  engine::SeqChunk c;
  c.request_id = 1;
  c.block_table.resize((at + kMaxVerifyRows + info.block_size - 1) / info.block_size);
  std::iota(c.block_table.begin(), c.block_table.end(), 0);
  const std::vector<int32_t> rows = {1, 2, 4, kMaxVerifyRows};
  std::vector<std::vector<double>> ms(rows.size());
  for (int32_t r = 0; r < std::max(runs, 1) * 5; ++r) {
    for (size_t i = 0; i < rows.size(); ++i) {
      ms[i].push_back(time_forward_ms(eng, c, at, rows[i], info.n_vocab, true, rows[i]));
    }
  }
  std::vector<VerifyCost> out;
  for (size_t i = 0; i < rows.size(); ++i) {
    VerifyCost v;
    v.rows = rows[i];
    v.ms = median(ms[i]);
    out.push_back(v);
  }
  for (auto& v : out) v.ratio = out[0].ms > 0 ? v.ms / out[0].ms : 0;
  return out;
}

// Tokens a verify of k drafts yields when each draft is right with probability p independently
// (the sampled token after the last kept draft included): 1 + p + ... + p^k.
double tokens_per_verify(int32_t k, double p) {
  double sum = 0, term = 1;
  for (int32_t i = 0; i <= k; ++i, term *= p) sum += term;
  return sum;
}

// One sequence grows through the sorted context lengths; each timed chunk and decode row writes
// the slots just past the context, which the next fill overwrites, so the KV is filled once.
std::vector<ContextRow> bench_contexts(const BenchArgs& a) {
  std::vector<int32_t> ctx = a.contexts;
  std::sort(ctx.begin(), ctx.end());
  if (ctx.front() < 0 || a.step < 1 || a.runs < 1 || a.chunk < 1) {
    throw std::runtime_error("bench engine: need --contexts >= 0, --step >= 1, --runs >= 1");
  }
  auto eng = engine::load_llama_engine(a.model, a.engine);
  const auto info = eng->info();
  const int32_t n_blocks = (ctx.back() + a.step + info.block_size - 1) / info.block_size;
  eng->allocate_kv(n_blocks);
  engine::SeqChunk c;
  c.request_id = 1;
  c.block_table.resize(n_blocks);
  std::iota(c.block_table.begin(), c.block_table.end(), 0);
  std::vector<ContextRow> rows;
  int32_t filled = 0;
  for (const int32_t n : ctx) {
    ContextRow r;
    r.context = n;
    for (; filled < n; filled += a.chunk) {
      r.fill_ms +=
          time_forward_ms(*eng, c, filled, std::min(a.chunk, n - filled), info.n_vocab, false);
    }
    filled = n;
    std::vector<double> chunk, decode, cpu;
    for (int32_t k = 0; k < a.runs; ++k) {
      const double cpu0 = process_cpu_ms();
      chunk.push_back(time_forward_ms(*eng, c, n, a.step, info.n_vocab, false));
      cpu.push_back(process_cpu_ms() - cpu0);
      decode.push_back(time_forward_ms(*eng, c, n, 1, info.n_vocab, true));
    }
    r.chunk_ms = median(chunk);
    r.decode_ms = median(decode);
    r.chunk_cpu_ms = median(cpu);
    std::fprintf(stderr,
                 "context %d: fill %.0f ms, %d-token chunk %.1f ms (cpu %.0f ms), decode row "
                 "%.1f ms\n",
                 n, r.fill_ms, a.step, r.chunk_ms, r.chunk_cpu_ms, r.decode_ms);
    rows.push_back(r);
  }
  return rows;
}

void print_contexts(const BenchArgs& a, const std::vector<ContextRow>& rows) {
  if (a.json) {
    nlohmann::json j = {{"model", a.model},
                        {"simd", kernels::simd_level_name()},
                        {"step_tokens", a.step},
                        {"runs", a.runs},
                        {"contexts", nlohmann::json::array()}};
    for (const auto& r : rows) {
      j["contexts"].push_back({{"context", r.context},
                               {"fill_ms", r.fill_ms},
                               {"chunk_ms", r.chunk_ms},
                               {"chunk_cpu_ms", r.chunk_cpu_ms},
                               {"decode_row_ms", r.decode_ms}});
    }
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  std::printf("model            %s (%s, medians of %d)\n", a.model.c_str(),
              kernels::simd_level_name(), a.runs);
  std::printf("%10s %12s %14s %14s %14s\n", "context", "fill ms", "chunk ms", "chunk cpu ms",
              "decode row ms");
  for (const auto& r : rows) {
    std::printf("%10d %12.0f %14.1f %14.0f %14.2f\n", r.context, r.fill_ms, r.chunk_ms,
                r.chunk_cpu_ms, r.decode_ms);
  }
}

// The sampler's share of one decode step (0 when no step was measured).
double step_share(const SamplerBenchRow& r, const EngineFigures* f) {
  return f && f->decode_tok_s > 0 ? r.us_per_call * f->decode_tok_s / 1e6 : 0;
}

void print_json(const BenchArgs& a, const EngineFigures* f, const std::vector<SamplerBenchRow>& s) {
  nlohmann::json j = nlohmann::json::object();
  if (f) {
    j = {{"model", a.model},
         {"threads", f->threads},
         {"simd", kernels::simd_level_name()},
         {"prompt_tokens", a.prompt},
         {"gen_tokens", a.gen},
         {"runs", a.runs},
         {"prefill_tok_s", f->prefill_tok_s},
         {"decode_tok_s", f->decode_tok_s},
         {"read_bandwidth_gbs", f->bw_gbs},
         {"decode_bytes_per_token", f->bytes_per_token},
         {"decode_bandwidth_fraction", f->bw_frac},
         {"int8_peak_gops", f->peak_gops},
         {"matmul_params_per_token", f->params_per_token},
         {"prefill_peak_fraction", f->peak_frac},
         {"peak_rss_mb", f->rss_mb},
         {"weights_plus_kv_mb", f->model_mb}};
    auto& verify = j["verify"] = nlohmann::json::array();
    for (const auto& v : f->verify) {
      verify.push_back({{"rows", v.rows}, {"ms", v.ms}, {"ratio_to_decode_step", v.ratio}});
    }
  }
  if (a.sampler) {
    auto& rows = j["sampler"] = nlohmann::json::array();
    for (const auto& r : s) {
      rows.push_back({{"config", r.config},
                      {"n_vocab", r.n_vocab},
                      {"us_per_call", r.us_per_call},
                      {"calls", r.calls},
                      {"decode_step_share", step_share(r, f)}});
    }
  }
  std::printf("%s\n", j.dump(2).c_str());
}

void print_text(const BenchArgs& a, const EngineFigures* f, const std::vector<SamplerBenchRow>& s) {
  if (f) {
    std::printf("model            %s (%d threads, %s)\n", a.model.c_str(), f->threads,
                kernels::simd_level_name());
    std::printf("prefill          %.2f tok/s (median of %d, %d tokens)\n", f->prefill_tok_s, a.runs,
                a.prompt);
    std::printf("decode           %.2f tok/s (median of %d, %d tokens)\n", f->decode_tok_s, a.runs,
                a.gen);
    std::printf("read bandwidth   %.2f GB/s (measured now)\n", f->bw_gbs);
    std::printf("decode traffic   %.1f%% of bandwidth (%.2f tok/s x %.1f MB/token)\n",
                100 * f->bw_frac, f->decode_tok_s, f->bytes_per_token / 1e6);
    std::printf("int8 MAC peak    %.1f GOPS\n", f->peak_gops);
    std::printf("prefill compute  %.1f%% of peak (2 x %.1fM params x %.2f tok/s)\n",
                100 * f->peak_frac, f->params_per_token / 1e6, f->prefill_tok_s);
    std::printf("peak RSS         %.1f MB (weights + KV: %.1f MB)\n", f->rss_mb, f->model_mb);
    for (const auto& v : f->verify) {
      if (v.rows == 1) continue;
      const int32_t k = v.rows - 1;
      std::printf(
          "verify %d drafts  %.2fx a decode step (%.2f ms); speedup at 50%% / 80%% of drafts "
          "right: %.2fx / %.2fx\n",
          k, v.ratio, v.ms, tokens_per_verify(k, 0.5) / v.ratio,
          tokens_per_verify(k, 0.8) / v.ratio);
    }
  }
  for (const auto& r : s) {
    std::printf("sampler          %-22s %6d vocab %9.1f us/call", r.config.c_str(), r.n_vocab,
                r.us_per_call);
    if (f) std::printf("  %6.3f%% of a decode step", 100 * step_share(r, f));
    std::printf("\n");
  }
}

void run_bench(const BenchArgs& a) {
  if (!a.contexts.empty()) {
    if (a.model.empty()) throw std::runtime_error("bench engine: --contexts needs -m");
    return print_contexts(a, bench_contexts(a));
  }
  if (a.model.empty() && !a.sampler) {
    throw std::runtime_error("bench engine: nothing to measure without -m and with --no-sampler");
  }
  EngineFigures f;
  if (!a.model.empty()) f = bench_engine(a);
  std::vector<SamplerBenchRow> s;
  if (a.sampler) s = bench_sampler({32000, 128256});
  const EngineFigures* fp = a.model.empty() ? nullptr : &f;
  if (a.json) {
    print_json(a, fp, s);
  } else {
    print_text(a, fp, s);
  }
}

}  // namespace

void register_bench_engine(CLI::App& bench) {
  auto a = std::make_shared<BenchArgs>();
  auto* cmd =
      bench.add_subcommand("engine", "prefill/decode speed of the CPU engine vs the machine");
  cmd->add_option("-m,--model", a->model, "model .gguf file (without it only the sampler runs)");
  cmd->add_option("-p,--prompt-tokens", a->prompt, "prefill length")->capture_default_str();
  cmd->add_option("-n,--gen-tokens", a->gen, "decode steps")->capture_default_str();
  cmd->add_option("--runs", a->runs, "runs (medians are reported)")->capture_default_str();
  cmd->add_option("--chunk", a->chunk, "prefill tokens per forward")->capture_default_str();
  cmd->add_option("--contexts", a->contexts,
                  "context lengths (e.g. 512,1024,2048,4096,8192): time a --step-token prefill "
                  "chunk and a decode row at each instead of the figures above")
      ->delimiter(',');
  cmd->add_option("--step", a->step, "prefill tokens of the chunk timed with --contexts")
      ->capture_default_str();
  cmd->add_option("--threads", a->engine.threads, "compute threads (0 = all cores)")
      ->capture_default_str();
  cmd->add_option("--kv-type", a->engine.kv_type,
                  "KV cache type of keys and values alike (see -ctk, -ctv)")
      ->capture_default_str();
  add_kv_type_flags(cmd, a->engine);
  cmd->add_flag("!--plain-weights", a->engine.interleave_weights,
                "keep the file's weight layout (no tiles rewritten at load), to compare");
  cmd->add_flag("--json", a->json, "print the figures as JSON");
  cmd->add_flag("--sampler,!--no-sampler", a->sampler,
                "time the sampler on 32K and 128K random logits (default on)");
  cmd->callback([a] { run_bench(*a); });
}

}  // namespace baton::cli
