// `baton template render (--model FILE.gguf | --template FILE.jinja) --context CONTEXT.json
// [--now 2024-07-26T12:00:00] [--name NAME]`: prints the prompt that the chat template renders
// from the context, exactly (no newline added), as Hugging Face transformers would render it.
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>

#include "chat/chat_template.h"
#include "cli/commands.h"
#include "gguf/gguf_file.h"

namespace baton::cli {
namespace {

struct RenderArgs {
  std::string model;
  std::string template_file;
  std::string context;
  std::string name;
  chat::RenderOptions options;
};

std::string template_from_gguf(const std::string& path, const std::string& name) {
  auto gguf = gguf::GgufFile::open(path);
  const std::string key =
      name.empty() ? "tokenizer.chat_template" : "tokenizer.chat_template." + name;
  if (!gguf->has(key)) {
    const std::string_view prefix = "tokenizer.chat_template.";
    std::string names;
    for (const auto& [k, v] : gguf->metadata()) {
      if (k.starts_with(prefix)) names.append(" ").append(k, prefix.size());
    }
    throw std::runtime_error(path + " has no " + key +
                             (names.empty() ? "" : " (named templates:" + names + ")"));
  }
  return gguf->get_string(key);
}

void run_render(const RenderArgs& a) {
  if (a.model.empty() == a.template_file.empty()) {
    throw std::runtime_error("template render: give exactly one of --model or --template");
  }
  if (!a.name.empty() && a.model.empty()) {
    throw std::runtime_error("template render: --name picks a template of a --model GGUF");
  }
  const std::string context = read_file("--context", a.context);
  // Checked here for a clear message; the text itself goes to the renderer untouched, so numbers
  // and key order reach the template exactly as written.
  nlohmann::ordered_json parsed;
  try {
    parsed = nlohmann::ordered_json::parse(context);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error("--context " + a.context + ": not valid JSON: " + e.what());
  }
  if (!parsed.is_object()) {
    throw std::runtime_error("--context " + a.context + ": must be a JSON object");
  }
  const std::string source = a.model.empty() ? read_file("--template", a.template_file)
                                             : template_from_gguf(a.model, a.name);
  const auto tmpl = chat::ChatTemplate::from_text(source);
  const std::string out = tmpl.render_json(context, a.options);
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  set_exit_code(0);
}

}  // namespace

void register_template(CLI::App& app) {
  auto* group = app.add_subcommand("template", "chat templates: render one as the model sees it");
  group->require_subcommand(1);
  auto args = std::make_shared<RenderArgs>();
  auto* cmd = group->add_subcommand(
      "render", "print the prompt a chat template renders from a context, exactly");
  cmd->add_option("-m,--model", args->model, "a .gguf file: its tokenizer.chat_template");
  cmd->add_option("--template", args->template_file, "a Jinja chat template file");
  cmd->add_option("--context", args->context,
                  "JSON object: messages, add_generation_prompt, bos_token, eos_token, tools, ...")
      ->required();
  cmd->add_option("--now", args->options.now,
                  "the time strftime_now() formats (ISO 8601; default 2024-07-26T12:00:00)");
  cmd->add_option("--name", args->name, "use tokenizer.chat_template.NAME (e.g. tool_use)");
  cmd->callback([args] { run_render(*args); });
}

std::string read_file(const std::string& flag, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(flag + " " + path + ": cannot open for reading");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace baton::cli
