// `baton template render`, run as the real binary: exact output of a golden case from a template
// file and from a GGUF, the one-line error of a raising template, and independence from the
// user's PYTHONHOME / PYTHONPATH.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gguf/gguf_writer.h"
#include "support/run_baton.h"
#include "support/shared_files.h"

namespace baton::chat {
namespace {

using nlohmann::ordered_json;

using testing::run_baton;

void write_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

ordered_json golden(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return ordered_json::parse(in);
}

TEST(CliTemplate, GoldenCaseFromTemplateAndFromGguf) {
  BATON_REQUIRE_BINARY();
  BATON_REQUIRE_SHARED(path, "chat-templates/Qwen-Qwen2.5-7B-Instruct.json");
  const auto g = golden(path);
  const auto dir = testing::scratch_dir();
  write_file(dir / "t.jinja", g.at("source").get<std::string>());
  gguf::GgufWriter w;
  w.set_string("general.architecture", "qwen2");
  w.set_string("tokenizer.chat_template", "unused");
  w.set_string("tokenizer.chat_template.tool_use", g.at("source").get<std::string>());
  w.write((dir / "m.gguf").string());
  size_t checked = 0;
  for (const auto& c : g.at("cases")) {
    if (!c.contains("expected")) continue;
    SCOPED_TRACE(c.at("name").get<std::string>());
    write_file(dir / "ctx.json", c.at("context").dump(2));
    const std::string ctx = " --context '" + (dir / "ctx.json").string() + "'";
    auto r =
        run_baton("template render --template '" + (dir / "t.jinja").string() + "'" + ctx, false);
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.output, c.at("expected").get<std::string>());
    r = run_baton(
        "template render --model '" + (dir / "m.gguf").string() + "' --name tool_use" + ctx, false);
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.output, c.at("expected").get<std::string>());
    if (++checked == 2) break;  // each run starts an interpreter; two cases show it
  }
  EXPECT_EQ(checked, 2u);
}

TEST(CliTemplate, RaisingTemplateIsOneLineExitOne) {
  BATON_REQUIRE_BINARY();
  const auto dir = testing::scratch_dir();
  write_file(dir / "t.jinja",
             "{% if messages[0].role == 'system' %}"
             "{{ raise_exception('System role not supported') }}{% endif %}ok");
  write_file(dir / "ctx.json", R"({"messages": [{"role": "system", "content": "x"}]})");
  auto r = run_baton("template render --template '" + (dir / "t.jinja").string() + "' --context '" +
                         (dir / "ctx.json").string() + "'",
                     true);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.output, "baton: error: TemplateError: System role not supported\n");
}

TEST(CliTemplate, NowAndIsolationFromPythonEnvironment) {
  BATON_REQUIRE_BINARY();
  const auto dir = testing::scratch_dir();
  write_file(dir / "t.jinja", "{{ strftime_now('%d %B %Y') }}");
  write_file(dir / "ctx.json", "{}");
  const std::string args = "template render --template '" + (dir / "t.jinja").string() +
                           "' --context '" + (dir / "ctx.json").string() + "'";
  // A PYTHONHOME/PYTHONPATH of another Python (pyenv, virtualenv) must not be picked up.
  auto r = run_baton(args, true, "PYTHONHOME=/nonexistent PYTHONPATH=/nonexistent");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, "26 July 2024");
  r = run_baton(args + " --now 2030-12-31T23:59:00", true);
  EXPECT_EQ(r.output, "31 December 2030");
}

TEST(CliTemplate, BadInputs) {
  BATON_REQUIRE_BINARY();
  const auto dir = testing::scratch_dir();
  write_file(dir / "t.jinja", "x");
  write_file(dir / "bad.json", "[1, 2]");
  gguf::GgufWriter w;
  w.set_string("general.architecture", "llama");
  w.write((dir / "m.gguf").string());
  const std::string t = " --template '" + (dir / "t.jinja").string() + "'";
  for (const auto& [args, want] : std::vector<std::pair<std::string, std::string>>{
           {"template render" + t + " --context '" + (dir / "bad.json").string() + "'",
            "must be a JSON object"},
           {"template render" + t + " --context '" + (dir / "none.json").string() + "'",
            "cannot open"},
           {"template render --model '" + (dir / "m.gguf").string() + "' --context '" +
                (dir / "bad.json").string() + "'",
            "must be a JSON object"},
       }) {
    auto r = run_baton(args, true);
    EXPECT_EQ(r.status, 1) << args;
    EXPECT_NE(r.output.find(want), std::string::npos) << r.output;
  }
  write_file(dir / "ctx.json", "{}");
  auto r = run_baton("template render --model '" + (dir / "m.gguf").string() + "' --context '" +
                         (dir / "ctx.json").string() + "'",
                     true);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("has no tokenizer.chat_template"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace baton::chat

namespace baton::chat {
namespace {

// `baton serve`'s chat flags are checked before the model loads: one line with the fix.
TEST(CliServeChatFlags, BadFlagsFailAtOnceWithTheFix) {
  BATON_REQUIRE_BINARY();
  const auto dir = testing::scratch_dir();
  const std::string serve = "serve -m '" + (dir / "never-loaded.gguf").string() + "' ";
  struct Case {
    std::string flags, message;
  };
  const std::vector<Case> cases = {
      {"--chat-template '" + (dir / "missing.jinja").string() + "'", "cannot open for reading"},
      {"--chat-template-kwargs '[1]'", "--chat-template-kwargs must be a JSON object"},
      {"--tool-call-format nope", "use one of: hermes,"},
      {"--reasoning-format deep", "--reasoning-format must be 'auto'"},
  };
  for (const auto& c : cases) {
    auto r = testing::run_baton(serve + c.flags);
    EXPECT_EQ(r.status, 1) << c.flags;
    EXPECT_NE(r.output.find("baton: error: "), std::string::npos) << c.flags << ": " << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.flags << ": " << r.output;
    EXPECT_EQ(r.output.find("loading"), std::string::npos) << "the model was loaded first";
  }
}

}  // namespace
}  // namespace baton::chat
