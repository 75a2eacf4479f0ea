// `baton tokenize -m FILE [--no-bos] [--parse-special] [--file PATH | TEXT]`: prints the token
// ids of the text, space-separated, on one line.
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

#include "cli/commands.h"
#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"

namespace baton::cli {
namespace {

struct TokenizeArgs {
  std::string model;
  std::string file;
  std::string text;
  bool no_bos = false;
  bool parse_special = false;
};

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("--file " + path + ": cannot open for reading");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void run_tokenize(const TokenizeArgs& a) {
  if (a.file.empty() == a.text.empty()) {
    throw std::runtime_error("tokenize: give exactly one of --file PATH or TEXT");
  }
  const std::string text = a.file.empty() ? a.text : read_text_file(a.file);
  auto gguf = gguf::GgufFile::open(a.model);
  auto tok = tokenizer::Tokenizer::from_gguf(*gguf);
  const auto ids = tok->encode(text, tok->add_bos() && !a.no_bos, a.parse_special);
  std::string line;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) line += ' ';
    line += std::to_string(ids[i]);
  }
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stdout);
  set_exit_code(0);
}

}  // namespace

void register_tokenize(CLI::App& app) {
  auto args = std::make_shared<TokenizeArgs>();
  auto* cmd = app.add_subcommand("tokenize", "print the token ids of a text, space-separated");
  cmd->add_option("-m,--model", args->model, "a .gguf file with a tokenizer")->required();
  cmd->add_flag("--no-bos", args->no_bos, "do not prepend BOS even when the model asks for it");
  cmd->add_flag("--parse-special", args->parse_special,
                "recognise control-token texts such as <|im_end|> in the input");
  cmd->add_option("--file", args->file, "read the text from this file instead of TEXT");
  cmd->add_option("text", args->text, "the text to tokenize");
  cmd->callback([args] { run_tokenize(*args); });
}

}  // namespace baton::cli
