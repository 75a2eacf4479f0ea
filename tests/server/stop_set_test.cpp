// Stop strings compiled once (StopSet) and matched per choice (StopMatcher): the automaton
// agrees with a plain search however the text is split, the set is shared rather than copied,
// and the byte bounds refuse what would make every choice hold megabytes.
#include "server/answer/stop_set.h"

#include <gtest/gtest.h>

#include <random>

#include "server/answer/stop_matcher.h"
#include "server/errors.h"

namespace baton::server {
namespace {

// What the matcher must produce: the text before the first stop to end in it (of those ending
// at the same byte, the longest), and that stop.
struct Expected {
  std::string text;
  std::string stop;
};

Expected reference(const std::string& text, const std::vector<std::string>& stops) {
  for (size_t end = 1; end <= text.size(); ++end) {
    const std::string* best = nullptr;
    for (const auto& s : stops) {
      if (s.empty() || s.size() > end || text.compare(end - s.size(), s.size(), s) != 0) continue;
      if (best == nullptr || s.size() > best->size()) best = &s;
    }
    if (best != nullptr) return {text.substr(0, end - best->size()), *best};
  }
  return {text, ""};
}

std::string random_text(std::mt19937& rng, size_t max_len, char last) {
  std::uniform_int_distribution<size_t> len(0, max_len);
  std::uniform_int_distribution<int> ch('a', last);
  std::string s(len(rng), 'a');
  for (auto& c : s) c = static_cast<char>(ch(rng));
  return s;
}

TEST(StopSet, AgreesWithAPlainSearchOnRandomTextsAndSplits) {
  std::mt19937 rng(1234);
  for (int round = 0; round < 3000; ++round) {
    std::vector<std::string> stops;
    const int n = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < n; ++i) stops.push_back(random_text(rng, 5, 'c'));
    const std::string text = random_text(rng, 40, 'c');
    const Expected want = reference(text, stops);
    StopMatcher m(make_stop_set(stops));
    std::string got;
    for (size_t at = 0; at < text.size();) {
      const size_t piece = 1 + rng() % 6;
      got += m.push(text.substr(at, piece));
      at += piece;
    }
    got += m.flush();
    ASSERT_EQ(got, want.text) << "text '" << text << "' round " << round;
    ASSERT_EQ(m.matched_string(), want.stop) << "text '" << text << "' round " << round;
    ASSERT_EQ(m.matched(), !want.stop.empty());
  }
}

TEST(StopSet, HeldTextNeverExceedsTheLongestStop) {
  StopMatcher m(make_stop_set({std::string(100, 'a') + "b"}));
  std::string out;
  for (int i = 0; i < 1000; ++i) out += m.push("a");
  // All but the last 100 'a's may be sent: those could still begin the stop.
  EXPECT_EQ(out.size(), 900u);
  EXPECT_EQ(m.flush().size(), 100u);
}

TEST(StopSet, ChoicesShareOneSet) {
  const size_t before = StopSet::live();
  auto set = make_stop_set({"END", "STOP"});
  std::vector<StopMatcher> choices;
  for (int i = 0; i < 64; ++i) choices.emplace_back(set);
  EXPECT_EQ(StopSet::live(), before + 1);
  EXPECT_EQ(set.use_count(), 65);
  EXPECT_EQ(choices[0].push("xSTOPy"), "x");
  EXPECT_FALSE(choices[1].matched()) << "each choice keeps its own state";
  EXPECT_EQ(choices[1].push("ab"), "ab");
}

TEST(StopSet, EmptyStopsMakeNoSet) {
  EXPECT_EQ(make_stop_set({}), nullptr);
  EXPECT_EQ(make_stop_set({"", ""}), nullptr);
  StopMatcher m(nullptr);
  EXPECT_EQ(m.push("text"), "text");
  EXPECT_EQ(m.flush(), "");
}

TEST(StopSet, ByteBoundsNameTheLimit) {
  EXPECT_NO_THROW(check_stop_bytes({std::string(kMaxStopBytes, 'x')}, "stop"));
  try {
    check_stop_bytes({"a", std::string(kMaxStopBytes + 1, 'x')}, "stop");
    FAIL() << "a stop string over the limit passed";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(e.param, "stop");
    EXPECT_NE(std::string(e.what()).find(std::to_string(kMaxStopBytes)), std::string::npos)
        << e.what();
  }
  std::vector<std::string> many(kMaxStopTotalBytes / kMaxStopBytes + 1,
                                std::string(kMaxStopBytes, 'y'));
  try {
    check_stop_bytes(many, "stop_sequences");
    FAIL() << "stop strings over the total passed";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.param, "stop_sequences");
    EXPECT_NE(std::string(e.what()).find(std::to_string(kMaxStopTotalBytes)), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace baton::server
