// The Jinja2 environment as transformers sets it up, checked on small templates: whitespace
// control, the generation tag, tojson, raise_exception, strftime_now, the sandbox, key order,
// errors as one line, and concurrent use from many threads.
#include "chat/chat_template.h"

#include <gtest/gtest.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace baton::chat {
namespace {

using nlohmann::ordered_json;

std::string render(const std::string& source, const ordered_json& ctx = ordered_json::object(),
                   const RenderOptions& opt = {}) {
  return ChatTemplate::from_text(source).render(ctx, opt);
}

std::string error_of(const std::string& source, const ordered_json& ctx = ordered_json::object()) {
  try {
    render(source, ctx);
  } catch (const TemplateError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ChatTemplate, TrimAndLstripBlocks) {
  EXPECT_EQ(render("  {% if true %}\nyes\n  {% endif %}\nend"), "yes\nend");
  EXPECT_EQ(render("{% for m in messages %}{{ m.role }}:{{ m['content'] }};{% endfor %}",
                   {{"messages", {{{"role", "user"}, {"content", "hi"}}}}}),
            "user:hi;");
}

TEST(ChatTemplate, LoopControlsAndGenerationTag) {
  EXPECT_EQ(render("{% for i in range(5) %}{% if i == 1 %}{% continue %}{% endif %}"
                   "{% if i == 3 %}{% break %}{% endif %}{{ i }}{% endfor %}"),
            "02");
  EXPECT_EQ(render("a{% generation %}<{{ x }}>{% endgeneration %}b", {{"x", 1}}), "a<1>b");
}

TEST(ChatTemplate, TojsonIsJsonDumps) {
  ordered_json ctx = {{"v", {{"b", "é<&>"}, {"a", {1, 2.5, nullptr, true}}}}};
  EXPECT_EQ(render("{{ v | tojson }}", ctx), R"({"b": "é<&>", "a": [1, 2.5, null, true]})");
  EXPECT_EQ(render("{{ v | tojson(ensure_ascii=True, sort_keys=True) }}", ctx),
            R"({"a": [1, 2.5, null, true], "b": "\u00e9<&>"})");
  EXPECT_EQ(render("{{ v.a | tojson(indent=2) }}", ctx), "[\n  1,\n  2.5,\n  null,\n  true\n]");
  EXPECT_EQ(render("{{ v | tojson(separators=(',', ':')) }}", ctx),
            R"({"b":"é<&>","a":[1,2.5,null,true]})");
}

TEST(ChatTemplate, KeyOrderReachesTheTemplate) {
  ordered_json ctx = {{"d", {{"z", 1}, {"a", 2}, {"m", 3}}}};
  EXPECT_EQ(render("{% for k, v in d.items() %}{{ k }}{% endfor %}", ctx), "zam");
  EXPECT_EQ(ChatTemplate::from_text("{{ d | tojson }}").render_json(R"({"d": {"z": 1, "a": 2.0}})"),
            R"({"z": 1, "a": 2.0})");
}

TEST(ChatTemplate, StrftimeNowIsFixedUnlessGiven) {
  EXPECT_EQ(render("{{ strftime_now('%Y-%m-%d %H:%M %A') }}"), "2024-07-26 12:00 Friday");
  RenderOptions opt;
  opt.now = "2025-01-02T03:04:05";
  EXPECT_EQ(render("{{ strftime_now('%d %b %Y %H:%M:%S') }}", ordered_json::object(), opt),
            "02 Jan 2025 03:04:05");
  opt.now = "yesterday";
  EXPECT_THROW(render("x", ordered_json::object(), opt), TemplateError);
}

TEST(ChatTemplate, ErrorsAreOneLine) {
  EXPECT_EQ(error_of("{{ raise_exception('System role not supported') }}"),
            "TemplateError: System role not supported");
  EXPECT_EQ(error_of("{{ raise_exception('two\nlines') }}"), "TemplateError: two lines");
  EXPECT_EQ(error_of("{{ x.y }}"), "UndefinedError: 'x' is undefined");
  EXPECT_EQ(error_of("{{ d.nope.deeper }}", {{"d", ordered_json::object()}}),
            "UndefinedError: 'dict object' has no attribute 'nope'");
  // Undefined prints as empty and is falsy, as Jinja2's default Undefined.
  EXPECT_EQ(render("[{{ x }}]{% if not x %}no{% endif %}"), "[]no");
  try {
    ChatTemplate::from_text("line one\n{% if %}");
    FAIL() << "a syntax error compiled";
  } catch (const TemplateError& e) {
    EXPECT_EQ(std::string(e.what()),
              "TemplateSyntaxError: Expected an expression, got 'end of statement block' (line 2)");
  }
}

TEST(ChatTemplate, ImmutableSandbox) {
  EXPECT_EQ(error_of("{% set l = [] %}{{ l.append(1) }}"),
            "SecurityError: access to attribute 'append' of 'list' object is unsafe.");
  EXPECT_NE(error_of("{{ ''.__class__.__mro__ }}"), "(no error)");
  // namespace() is the mutable state templates are allowed.
  EXPECT_EQ(render("{% set ns = namespace(n=0) %}{% for i in [1,2,3] %}{% set ns.n = ns.n + i %}"
                   "{% endfor %}{{ ns.n }}"),
            "6");
}

TEST(ChatTemplate, BadContexts) {
  auto t = ChatTemplate::from_text("{{ x }}");
  EXPECT_THROW(t.render_json("[1, 2]"), TemplateError);
  EXPECT_THROW(t.render_json("{\"x\": "), TemplateError);
  EXPECT_THROW(t.render_json("{\"x\": \"\xff\"}"), TemplateError);
  EXPECT_THROW(t.render(nullptr), TemplateError);
  // A key named like a Python parameter of Template.render does not break the call.
  EXPECT_EQ(t.render_json(R"({"x": "ok", "self": 1})"), "ok");
}

TEST(ChatTemplate, ManyThreadsAtOnce) {
  auto t = ChatTemplate::from_text(
      "{% for m in messages %}<|{{ m.role }}|>{{ m.content | trim }}\n{% endfor %}");
  constexpr int kThreads = 8, kRounds = 50;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      for (int r = 0; r < kRounds; ++r) {
        const std::string content = " t" + std::to_string(i) + "r" + std::to_string(r) + " ";
        ordered_json ctx = {{"messages", {{{"role", "user"}, {"content", content}}}}};
        // Half of the threads also compile their own template, exercising the cache.
        const auto& tmpl = (i % 2) ? t : ChatTemplate::from_text(t.source());
        if (tmpl.render(ctx) != "<|user|>t" + std::to_string(i) + "r" + std::to_string(r) + "\n") {
          ++wrong;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace baton::chat
