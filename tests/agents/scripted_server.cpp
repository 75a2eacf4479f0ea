// baton_scripted_server: the real HTTP server (routes, chat templates, tool-call parsing, SSE)
// over a scripted backend instead of a model, for end-to-end tests with real agent clients.
// Test code only; `baton` itself has no such mode. Prints "port=N" once it serves; SIGINT or
// SIGTERM: running requests end (reason shutdown), the server stops, exit 0.
#include <pthread.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "scripted/request_log.h"
#include "scripted/script.h"
#include "scripted/scripted_backend.h"
#include "scripted/vocab.h"
#include "server/http_server.h"
#include "tokenizer/tokenizer_codec.h"

namespace {

struct Args {
  std::string model, chat_template, script, log, eot;
  std::vector<std::string> added;
  baton::server::ServerOptions server;
  int32_t ctx = 131072;
};

std::string read_file(const std::string& what, const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + what + " " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int serve(const Args& a, const sigset_t& signals) {
  using namespace baton;
  auto gguf = gguf::GgufFile::open(a.model);
  std::vector<agents::AddedToken> added;
  for (const auto& s : a.added) added.push_back(agents::parse_added_token(s));
  auto vocab = agents::load_vocab(*gguf, added, a.eot);
  auto tok = tokenizer::Tokenizer::from_spec(vocab);
  auto replies = agents::reply_tokenizer(vocab);
  tokenizer::TokenizerCodec codec(*tok);
  auto script = agents::Script::load(a.script);
  agents::RequestLog log(a.log);

  server::ServerOptions opts = a.server;
  if (!a.chat_template.empty())
    opts.chat.template_text = read_file("--chat-template", a.chat_template);
  sched::SchedConfig config;
  config.ctx = a.ctx;
  config.parallel = 8;
  agents::ScriptedBackend backend(*tok, *replies, *script, log, config);
  server::HttpServer http(opts);
  const int port = http.start();
  http.attach(backend, codec, 0, gguf->get_string_or("tokenizer.chat_template", ""));
  std::printf("port=%d\n", port);
  std::fflush(stdout);

  int sig = 0;
  sigwait(&signals, &sig);
  std::fprintf(stderr, "scripted_server: signal %d, stopping\n", sig);
  backend.shutdown();
  http.stop(std::chrono::milliseconds(500));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Blocked before any thread starts, so only sigwait sees them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  Args a;
  a.server.port = 0;
  a.server.model_id = "scripted";
  CLI::App app{"baton's HTTP server over a scripted backend (agent end-to-end tests)"};
  app.add_option("--port", a.server.port, "port (0: any free one)")->capture_default_str();
  app.add_option("--host", a.server.host, "address")->capture_default_str();
  app.add_option("--model", a.model, "GGUF whose tokenizer is the codec")->required();
  app.add_option("--chat-template", a.chat_template, "Jinja chat template file");
  app.add_option("--chat-template-kwargs", a.server.chat.template_kwargs, "JSON object");
  app.add_option("--tool-call-format", a.server.chat.tool_call_format, "tool-call format name");
  app.add_option("--script", a.script, "script JSON (rules → replies)")->required();
  app.add_option("--log", a.log, "JSON lines file: one line per submitted request");
  app.add_option("--model-id", a.server.model_id, "model name /v1/models lists")
      ->capture_default_str();
  app.add_option("--ctx", a.ctx, "context (prompt + max_tokens)")->capture_default_str();
  app.add_option("--add-token", a.added, "control:TEXT or user:TEXT, appended to the vocabulary");
  app.add_option("--eot", a.eot, "text of the end-of-turn token");
  CLI11_PARSE(app, argc, argv);
  try {
    return serve(a, signals);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scripted_server: %s\n", e.what());
    return 1;
  }
}
