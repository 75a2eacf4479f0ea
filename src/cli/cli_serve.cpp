// `baton serve -m MODEL ...`: the OpenAI-compatible HTTP server. The listener comes up first
// (GET /health answers 503 while the model loads), then the engine loop starts and the model is
// attached. SIGINT/SIGTERM: the loop shuts down (running requests get --shutdown-grace-s to
// finish), the listener stops, exit 0.
#include <fmt/format.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>

#include <charconv>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "cli/commands.h"
#include "cli/kv_type_flags.h"
#include "engine/llama_engine.h"
#include "gguf/gguf_file.h"
#include "sched/engine_loop.h"
#include "sched/memory_plan.h"
#include "server/answer/backend.h"
#include "server/api/chat_prompt.h"
#include "server/http_server.h"
#include "tokenizer/tokenizer_codec.h"
#include "toolcall/output_format.h"
#include "util/host_memory.h"
#include "util/log.h"

namespace baton::cli {
namespace {

struct ServeArgs {
  std::string model;
  std::string chat_template_file;
  std::string reasoning_format = "auto";
  std::string alias;
  int threads = 0;
  engine::EngineOptions engine;  // the KV cache types (-ctk, -ctv)
  int32_t max_tokens_limit = 0;  // 0: --ctx
  bool no_prefix_cache = false;
  server::ServerOptions server;
  // A server for teams and agent fleets: several requests share each step by default.
  sched::SchedConfig sched = [] {
    sched::SchedConfig c;
    c.parallel = 4;
    // Steps bounded to 2 s, so a request arriving during a long prefill waits about one step
    // (and prefill preemption has boundaries to act at). On the 1B model, prefill in chunks of
    // 128 tokens and more runs within noise of 2048-token chunks (README "Measured"), and 2 s
    // holds more than 128 tokens there even on a busy machine.
    c.max_step_ms = 2000;
    return c;
  }();
};

// Waits for SIGINT/SIGTERM on its own thread (the signals are blocked everywhere else, so no
// thread is interrupted mid-write). A signal before the model is served exits at once.
class SignalWaiter {
 public:
  SignalWaiter() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);
    thread_ = std::thread([this] {
      int sig = 0;
      sigwait(&set_, &sig);
      std::unique_lock<std::mutex> lock(mu_);
      log::info("signal {}: shutting down", sig);
      if (!serving_) std::_Exit(0);
      stop_ = true;
      cv_.notify_all();
    });
  }
  ~SignalWaiter() {
    if (thread_.joinable()) thread_.detach();  // only on error paths: no signal came
  }
  void set_serving() {
    std::lock_guard<std::mutex> lock(mu_);
    serving_ = true;
  }
  void wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return stop_; });
    lock.unlock();
    thread_.join();
  }

 private:
  sigset_t set_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool serving_ = false;
  bool stop_ = false;
};

std::string model_id_for(const ServeArgs& a) {
  if (!a.alias.empty()) return a.alias;
  std::filesystem::path p(a.model);
  return p.extension() == ".gguf" ? p.stem().string() : p.filename().string();
}

// The GGUF's chat templates (empty when it has none).
server::ModelTemplates model_templates(const std::string& path) {
  auto f = gguf::GgufFile::open(path);
  server::ModelTemplates t;
  if (f->has("tokenizer.chat_template")) t.chat = f->get_string("tokenizer.chat_template");
  if (f->has("tokenizer.chat_template.tool_use")) {
    t.tool_use = f->get_string("tokenizer.chat_template.tool_use");
  }
  return t;
}

// Chat flags checked before the model loads, so a typo fails in a second, not after loading.
void read_chat_flags(ServeArgs& a) {
  if (!a.chat_template_file.empty()) {
    a.server.chat.template_text = read_file("--chat-template", a.chat_template_file);
    if (a.server.chat.template_text.empty()) {
      throw std::runtime_error("--chat-template " + a.chat_template_file + " is empty");
    }
  }
  if (a.reasoning_format != "auto" && a.reasoning_format != "none") {
    throw std::runtime_error(
        "--reasoning-format must be 'auto' (split <think> into "
        "reasoning_content) or 'none' (keep it in content)");
  }
  a.server.chat.reasoning = a.reasoning_format == "auto";
  server::check_chat_options(a.server.chat);
}

// One line a newcomer can paste into another terminal to see the server answer.
std::string try_it_line(const ServeArgs& a, int port) {
  const std::string& h = a.server.host;
  const std::string host = h == "0.0.0.0" || h == "::" || h.empty() ? "127.0.0.1" : h;
  const std::string auth =
      a.server.api_key.empty() ? "" : " -H 'Authorization: Bearer YOUR_API_KEY'";
  const std::string body = nlohmann::ordered_json{
      {"model", a.server.model_id},
      {"messages", {{{"role", "user"}, {"content", "Tell me a story."}}}},
      {"max_tokens", 64}}.dump();
  std::string quoted;  // inside single quotes, a quote is written '\''
  for (char c : body) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return fmt::format(
      "try it: curl -s http://{}:{}/v1/chat/completions{} -H 'Content-Type: "
      "application/json' -d '{}'",
      host.find(':') != std::string::npos ? "[" + host + "]" : host, port, auth, quoted);
}

// Before the weights are rewritten into tiles: the KV pool sized to what the host leaves, or a
// one-line refusal of settings that cannot fit (sched/memory_plan.h).
void plan_memory_at_start(ServeArgs& a, bool ctx_given, const model::ModelFootprint& fp) {
  const int32_t trained = fp.n_ctx_train;
  if (!ctx_given && trained > 0 && trained < a.sched.ctx) a.sched.ctx = trained;
  const util::HostMemory host = util::read_host_memory();
  // Under an address-space limit each thread's malloc arena reserves 64 MB of it: a few do.
  if (host.address_room != util::kUnlimited) mallopt(M_ARENA_MAX, 4);
  const sched::MemoryPlan plan = sched::plan_memory(fp, a.sched, ctx_given, host);
  a.sched.kv_blocks = plan.kv_blocks;
  a.sched.ctx = plan.ctx;
  log::info("{}", plan.summary);
  if (!plan.warning.empty()) log::warn("{}", plan.warning);
}

void serve(ServeArgs a, bool ctx_given) {
  read_chat_flags(a);
  a.model = resolve_model_arg(a.model);  // hf:REPO/FILE downloads first
  if (a.server.api_key.empty()) {
    if (const char* k = std::getenv("BATON_API_KEY")) a.server.api_key = k;
  }
  a.server.model_id = model_id_for(a);
  a.sched.prefix_cache = !a.no_prefix_cache;
  SignalWaiter signals;
  a.server.send_stall_ms = a.sched.send_stall_timeout_ms;
  server::HttpServer http(a.server);
  int port = http.start();
  log::info("listening on http://{}:{} (loading {})", a.server.host, port, a.model);
  engine::EngineOptions eo = a.engine;
  eo.threads = a.threads;
  eo.before_tiles = [&a, ctx_given](const model::ModelFootprint& fp) {
    plan_memory_at_start(a, ctx_given, fp);
  };
  auto eng = engine::load_llama_engine(a.model, eo);
  int32_t trained = eng->info().n_ctx_train;
  if (ctx_given && trained > 0 && a.sched.ctx > trained) {
    log::warn("--ctx {} is over the model's trained context {}; quality past it is not expected",
              a.sched.ctx, trained);
  }
  tokenizer::TokenizerCodec codec(eng->tokenizer());
  sched::EngineLoop loop(*eng, a.sched);
  loop.start();
  server::EngineLoopBackend backend(loop);
  http.attach(backend, codec, a.max_tokens_limit, model_templates(a.model));
  signals.set_serving();
  log::info("serving model '{}' ({}) at http://{}:{}  context {} tokens, vocab {}",
            a.server.model_id, a.model, a.server.host, port, a.sched.ctx, codec.n_vocab());
  std::printf("baton serve: http://%s:%d model=%s ctx=%d\n%s\n%s\n", a.server.host.c_str(), port,
              a.server.model_id.c_str(), a.sched.ctx, loop.config().describe().c_str(),
              try_it_line(a, port).c_str());
  std::fflush(stdout);
  signals.wait();
  // Requests get the grace period; then every stream has its last event, and the transport
  // has a short drain to write those before it closes what is left.
  loop.shutdown();
  http.stop(std::chrono::milliseconds(600));
  log::info("stopped");
  set_exit_code(0);
}

// The default latency target, in decode steps: a stream beside a long prefill then waits at
// most about three of its own gaps, and the prefill still gets about two thirds of each step.
// Not 3: the noisiest of a hundred mixed steps overruns its prediction by about 10 %, and the
// stream's own gap is about 5 % over the decode step measured alone (its neighbours' rows), so
// 3x put the worst gap at 3.0-3.1x the stream's median; 2.8x puts it at 2.9x (bench/fairness.py).
constexpr double kAutoItlDecodeSteps = 2.8;

void set_itl_target(sched::SchedConfig& s, const std::string& v) {
  s.itl_target_ms = 0;
  s.itl_target_decode_steps = 0;
  if (v == "auto") {
    s.itl_target_decode_steps = kAutoItlDecodeSteps;
    return;
  }
  if (v == "off") return;
  // "2.5x": that many decode steps, measured at start as for auto.
  const bool multiple = !v.empty() && (v.back() == 'x' || v.back() == 'X');
  double value = 0;
  const char* end = v.data() + v.size() - (multiple ? 1 : 0);
  auto [p, ec] = std::from_chars(v.data(), end, value);
  if (ec != std::errc() || p != end || !std::isfinite(value) || value < 0 ||
      (multiple && (value < 1 || value > 100))) {
    throw CLI::ValidationError("--itl-target-ms",
                               "'" + v +
                                   "' is not a latency: give milliseconds (e.g. 150), a "
                                   "multiple of the decode step from 1x to 100x (e.g. 2.5x), "
                                   "auto or off");
  }
  if (multiple) {
    s.itl_target_decode_steps = value;
  } else {
    s.itl_target_ms = value;  // 0 is off, as before
  }
}

void add_sched_flags(CLI::App* cmd, sched::SchedConfig& s, bool& no_prefix_cache) {
  cmd->add_option("--parallel,--batched-session", s.parallel, "requests running at once")
      ->capture_default_str();
  cmd->add_option("--max-queue", s.max_queue, "waiting requests before 503")->capture_default_str();
  cmd->add_option("--ctx", s.ctx,
                  "most tokens one request may hold (default: 4096, or the model's trained "
                  "context when smaller)");
  cmd->add_option("--prefill-chunk", s.prefill_chunk, "prefill quantum while nobody decodes")
      ->capture_default_str();
  cmd->add_option("--mixed-prefill-chunk", s.mixed_prefill_chunk,
                  "prefill quantum while somebody decodes")
      ->capture_default_str();
  s.itl_target_decode_steps = kAutoItlDecodeSteps;
  cmd->add_option_function<std::string>(
         "--itl-target-ms", [&s](const std::string& v) { set_itl_target(s, v); },
         fmt::format("size each mixed step's prefill share so a decoding stream's gap stays "
                     "within this many ms; Nx = N x the decode step measured at start, auto = "
                     "{:g}x, off = a fixed --mixed-prefill-chunk",
                     kAutoItlDecodeSteps))
      ->default_str("auto");
  cmd->add_option("--max-step-ms", s.max_step_ms,
                  "cap every step's prefill quantum so its measured cost stays within this "
                  "(--prefill-chunk stays the upper bound; 0 = off)")
      ->capture_default_str();
  cmd->add_option("--kv-ram-mb", s.kv_ram_mb,
                  "KV cache RAM (0 = ctx x parallel plus a quarter, or what fits beside the "
                  "weights when that is less)")
      ->capture_default_str();
  cmd->add_flag("--no-prefix-cache", no_prefix_cache, "do not reuse cached prompt prefixes");
  cmd->add_flag("--prefill-preempt,!--no-prefill-preempt", s.prefill_preempt,
                "when every slot is taken, park the longest running prefill for a shorter "
                "waiting request (default on)");
  cmd->add_option("--preempt-min-tokens", s.preempt_min_tokens,
                  "never park a prefill that has computed fewer tokens than this")
      ->capture_default_str();
  cmd->add_option("--preempt-max-per-request", s.preempt_max_per_request,
                  "most times one request is parked for another")
      ->capture_default_str();
  cmd->add_option("--preempt-max-wait-s", s.preempt_max_wait_s,
                  "a parked request that has waited this long in total takes a slot back")
      ->capture_default_str();
  cmd->add_option("--park-ram-mb", s.park_ram_mb,
                  "KV a parked prefill may keep pinned; beyond it, blocks go back to the prefix "
                  "cache and are recomputed (or reused) on resume")
      ->capture_default_str();
  cmd->add_option("--state-ram-mb", s.state_ram_mb,
                  "hybrid models: memory for recurrent-state checkpoints, which let a request "
                  "reuse a cached prefix (0 = none: every request computes its whole prompt)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--state-checkpoint-blocks", s.state_checkpoint_blocks,
                  "hybrid models: checkpoint the state every N full KV blocks (and at the end of "
                  "each prompt's last full block); 0 = auto from the state's size")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option_function<std::string>(
         "--speculate",
         [&s](const std::string& v) {
           s.speculate = v == "ngram"    ? sched::SpeculateMode::Ngram
                         : v == "suffix" ? sched::SpeculateMode::Suffix
                                         : sched::SpeculateMode::Off;
         },
         "ngram: decoding requests draft tokens by looking up their last tokens earlier in their "
         "own prompt and output, and check the drafts in the step; suffix: then in recent "
         "requests' outputs too; the output is the same bytes as with off")
      ->check(CLI::IsMember({"off", "ngram", "suffix"}))
      ->default_str("off");
  cmd->add_option("--draft-max", s.draft_max, "--speculate: most tokens drafted per step")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--spec-corpus-tokens", s.spec_corpus_tokens,
                  "--speculate suffix: tokens of recent outputs kept to draft from (the oldest "
                  "go first)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 24))
      ->capture_default_str();
  cmd->add_option("--live-steps", s.live_steps,
                  "step records kept for the live view (/dashboard, /events): its history, and how "
                  "far a viewer may fall behind before it loses steps")
      ->check(CLI::Range(16, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--kv-disk-dir", s.kv_disk_dir,
                  "directory of the KV disk tier: prefixes evicted from RAM or kept across "
                  "restarts are restored from it instead of recomputed (needs --kv-disk-space-mb)");
  cmd->add_option("--kv-disk-space-mb", s.kv_disk_space_mb,
                  "most disk the tier may use; least recently used segments go first (0 = off)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--send-stall-timeout-ms", s.send_stall_timeout_ms,
                  "fail a request whose client stops reading for this long")
      ->capture_default_str();
  cmd->add_option("--shutdown-grace-s", s.shutdown_grace_s,
                  "on SIGINT/SIGTERM, let running requests finish this long")
      ->capture_default_str();
}

}  // namespace

void register_serve(CLI::App& app) {
  auto a = std::make_shared<ServeArgs>();
  auto* cmd = app.add_subcommand("serve",
                                 "OpenAI-compatible HTTP server (/v1/chat/completions, "
                                 "/v1/completions, /metrics, /status)");
  auto& o = a->server;
  cmd->add_option("-m,--model", a->model,
                  "model .gguf file, or hf:REPO/FILE.gguf to download it first (baton pull)")
      ->required();
  cmd->add_option("--host", o.host, "address to listen on (loopback by default)")
      ->capture_default_str();
  cmd->add_option("--port", o.port, "port to listen on")->capture_default_str();
  cmd->add_option("--api-key", o.api_key,
                  "require 'Authorization: Bearer KEY' on every route but /health (default: "
                  "$BATON_API_KEY, else none)");
  cmd->add_option("--alias", a->alias, "model id clients use (default: file name without .gguf)");
  cmd->add_option("--threads", a->threads, "compute threads (0 = all cores)")
      ->capture_default_str();
  add_sched_flags(cmd, a->sched, a->no_prefix_cache);
  add_kv_type_flags(cmd, a->engine);
  cmd->add_option("--keepalive-s", o.keepalive_s,
                  "SSE ': keepalive' comment period while a stream waits")
      ->capture_default_str();
  cmd->add_option("--max-body-mb", o.max_body_mb, "largest request body (413 past it)")
      ->capture_default_str();
  cmd->add_option("--max-connections", o.max_connections,
                  "open client connections; past it the one waiting longest for its request "
                  "head is closed, or 503 when all are busy")
      ->capture_default_str();
  cmd->add_option("--header-timeout-s", o.header_timeout_s,
                  "a request head must arrive within this from its first byte (408 past it)")
      ->capture_default_str();
  cmd->add_option("--body-timeout-s", o.body_timeout_s,
                  "a request body must arrive within this after its head (408 past it)")
      ->capture_default_str();
  cmd->add_option("--idle-timeout-s", o.idle_timeout_s,
                  "close a keep-alive connection idle this long between requests")
      ->capture_default_str();
  cmd->add_option("--http-threads", o.http_threads, "I/O threads serving every connection")
      ->capture_default_str();
  cmd->add_option("--handler-threads", o.handler_threads,
                  "threads that parse and tokenize request bodies")
      ->capture_default_str();
  cmd->add_option("--chat-template", a->chat_template_file,
                  "Jinja chat template file to use instead of the model's tokenizer.chat_template");
  cmd->add_option("--chat-template-kwargs", o.chat.template_kwargs,
                  "JSON object of extra template variables, e.g. '{\"enable_thinking\":false}' "
                  "(a request's chat_template_kwargs add to them)");
  cmd->add_option("--tool-call-format", o.chat.tool_call_format,
                  "how the model writes tool calls (default: detected from the chat template): " +
                      fmt::format("{}", fmt::join(toolcall::format_names(), ", ")));
  cmd->add_option("--reasoning-format", a->reasoning_format,
                  "auto: <think>…</think> goes to reasoning_content; none: it stays in content")
      ->capture_default_str();
  cmd->add_option("--max-tokens-limit", a->max_tokens_limit,
                  "largest max_tokens a request may ask for (default: --ctx)");
  cmd->callback([a, cmd] {
    const auto& so = a->server;
    if (so.keepalive_s <= 0 || so.max_body_mb <= 0 || so.max_connections <= 0 ||
        so.header_timeout_s <= 0 || so.body_timeout_s <= 0 || so.idle_timeout_s <= 0 ||
        so.http_threads <= 0 || so.handler_threads <= 0 || a->sched.send_stall_timeout_ms <= 0) {
      throw std::runtime_error(
          "serve: --keepalive-s, --max-body-mb, --max-connections, --header-timeout-s, "
          "--body-timeout-s, --idle-timeout-s, --http-threads, --handler-threads and "
          "--send-stall-timeout-ms must be > 0");
    }
    if (a->sched.kv_disk_dir.empty() != (a->sched.kv_disk_space_mb == 0)) {
      throw std::runtime_error(
          "serve: the KV disk tier needs both --kv-disk-dir DIR and --kv-disk-space-mb N (> 0)");
    }
    if (!a->sched.kv_disk_dir.empty() && a->no_prefix_cache) {
      throw std::runtime_error(
          "serve: --kv-disk-dir needs the prefix cache: drop --no-prefix-cache");
    }
    serve(*a, cmd->count("--ctx") > 0);
  });
}

}  // namespace baton::cli
