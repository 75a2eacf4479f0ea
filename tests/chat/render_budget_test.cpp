// A chat template is code from a model file: a rendering is stopped past its time limit or its
// output budget with a TemplateBudgetError, and the interpreter renders the next template (and
// any other thread's) as if nothing had happened.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "chat/chat_template.h"

namespace baton::chat {
namespace {

using nlohmann::ordered_json;
using std::chrono::milliseconds;

// What a rendering of `source` throws ("" when it renders), and how long it took.
std::string budget_error(const std::string& source, RenderOptions opt, double* seconds = nullptr) {
  const auto t0 = std::chrono::steady_clock::now();
  std::string why;
  try {
    ChatTemplate::from_text(source).render(ordered_json::object(), opt);
  } catch (const TemplateBudgetError& e) {
    why = e.what();
  } catch (const TemplateError& e) {
    why = std::string("not a budget error: ") + e.what();
  }
  if (seconds) {
    *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  return why;
}

constexpr const char* kEndless =
    "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}done";

TEST(RenderBudget, ALoopingTemplateIsStoppedAndTheInterpreterStaysUsable) {
  RenderOptions opt;
  opt.time_limit = milliseconds(300);
  double s = 0;
  EXPECT_NE(budget_error(kEndless, opt, &s).find("time limit of 300 ms"), std::string::npos);
  EXPECT_LT(s, 60.0) << "stopped, not run to its end";
  // The same thread renders normally afterwards: no timeout is left pending on it.
  const auto ok = ChatTemplate::from_text("{% for i in range(3) %}{{ i }}{% endfor %}");
  for (int i = 0; i < 20; ++i) EXPECT_EQ(ok.render(ordered_json::object()), "012");
}

// While one thread's template loops, another thread's rendering waits for the lock and then
// completes once the loop is stopped.
TEST(RenderBudget, OtherThreadsRenderAfterTheLoopIsStopped) {
  RenderOptions opt;
  opt.time_limit = milliseconds(300);
  std::string looped;
  std::thread t([&] { looped = budget_error(kEndless, opt); });
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_EQ(ChatTemplate::from_text("{{ 6 * 7 }}").render(ordered_json::object()), "42");
  t.join();
  EXPECT_NE(looped.find("time limit"), std::string::npos) << looped;
}

// Output piece by piece past the budget, and the one-call allocations a template could ask for:
// each refused before it runs, in a fraction of the time it would take. Jinja folds constant
// filter calls while compiling, so these also prove the compiler runs under a budget: without
// one, '|center(10000000000)' allocates its 10 GB in from_text.
TEST(RenderBudget, OutputAndHugeValuesAreRefused) {
  RenderOptions opt;
  opt.max_output_chars = 1 << 20;
  for (const char* bomb : {
           "{% for i in range(100000) %}{{ 'x' * 100 }}{% endfor %}",
           "{{ 'x' * 10000000000 }}",
           "{{ 10000000000 * ['x'] }}",
           "{{ 2 ** 10000000000 }}",
           "{{ 'a'|center(10000000000) }}",
           "{{ 'a'|indent(10000000000, true) }}",
           "{{ '{:>9999999999}'.format(1) }}",
           "{{ '%9999999999d' % 1 }}",
           "{{ '%9999999999d'|format(1) }}",
           "{{ 'a'.ljust(10000000000) }}",
           "{{ '{:x^9999999999}'.format(1) }}",
           "{{ '{:.9999999999f}'.format(1.5) }}",
           "{{ '{:>{}}'.format(1, 10000000000) }}",
           "{{ '{a:>{w}}'.format_map({'a': 1, 'w': 10000000000}) }}",
           "{{ '%*d' % (10000000000, 1) }}",
           "{{ '%.*f'|format(10000000000, 1.5) }}",
           "{{ '%.9999999999f' % 1.5 }}",
           "{{ ([1]|batch(10000000000, 'x'))|list }}",
           "{{ ([1]|slice(10000000000))|list }}",
       }) {
    double s = 0;
    EXPECT_NE(budget_error(bomb, opt, &s).find("budget"), std::string::npos) << bomb;
    EXPECT_LT(s, 10.0) << bomb;
  }
  // The same operations within the budget render as Jinja renders them.
  const auto t = ChatTemplate::from_text(
      "{{ 'ab' * 3 }}|{{ 2 ** 10 }}|{{ 'a'|center(5) }}|{{ '%3d' % 7 }}|{{ '{:>4}'.format(1) }}|"
      "{{ '{:>{}}'.format(1, 3) }}|{{ '%*d' % (3, 7) }}|{{ '{}'.format(1733300000) }}|"
      "{{ '%d'|format(1733300000) }}|{{ ([1, 2, 3]|batch(2, 'x'))|list }}|"
      "{{ ([1, 2, 3]|slice(2))|list }}");
  EXPECT_EQ(t.render(ordered_json::object(), opt),
            "ababab|1024|  a  |  7|   1|  1|  7|1733300000|1733300000|[[1, 2], [3, 'x']]|"
            "[[1, 2], [3]]");
}

// The default budget follows the context: a long conversation renders.
TEST(RenderBudget, TheDefaultBudgetFollowsTheContext) {
  ordered_json ctx = {{"messages", ordered_json::array()}};
  const std::string big(3 << 20, 'y');
  ctx["messages"].push_back({{"role", "user"}, {"content", big}});
  const auto t = ChatTemplate::from_text(
      "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}<|end|>{% endfor %}");
  EXPECT_EQ(t.render(ctx).size(), big.size() + std::string("<|user|><|end|>").size());
}

}  // namespace
}  // namespace baton::chat
