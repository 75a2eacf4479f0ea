// ProtectedStrings: what a context's strings hold comes back byte for byte after rendering, and
// restore() reports exactly where the protected texts stand.
#include "chat/protected_strings.h"

#include <gtest/gtest.h>

namespace baton::chat {
namespace {

using ojson = nlohmann::ordered_json;

const std::string kLead = "\xF3\xB0\x80\x80";  // U+F0000, the sentinels' lead character

TEST(ProtectedStrings, RoundTripAndSpans) {
  ProtectedStrings p({"<|im_start|>", "<|im_end|>", "<|im", "X"});
  const std::string text = "a<|im_start|>b<|im_end|><|imX" + kLead + "z";
  const std::string prot = p.protect(text);
  EXPECT_EQ(prot.find("<|im"), std::string::npos) << "every protected text is replaced";
  EXPECT_EQ(prot.find('X'), std::string::npos);
  auto r = p.restore("[" + prot + "]");
  EXPECT_EQ(r.text, "[" + text + "]");
  // Longest first: "<|im_start|>" wins over "<|im"; the user's own U+F0000 is protected too.
  std::vector<std::pair<size_t, size_t>> want = {{2, 12}, {15, 10}, {25, 4}, {29, 1}, {30, 4}};
  EXPECT_EQ(r.literal, want);
}

TEST(ProtectedStrings, EveryStringAndKeyOfAContext) {
  ProtectedStrings p({"<s>"});
  ojson ctx = {{"messages", {{{"role", "user"}, {"content", "x<s>y"}}}},
               {"tools", {{{"<s>key", {1, "<s>", true}}}}}};
  const ojson original = ctx;
  p.protect(ctx);
  EXPECT_EQ(ctx.dump().find("<s>"), std::string::npos) << ctx.dump();
  EXPECT_EQ(ctx["messages"][0]["role"], "user") << "key order and other values are kept";
  auto r = p.restore(ctx.dump());
  EXPECT_EQ(r.text, original.dump());
  EXPECT_EQ(r.literal.size(), 3u);
}

TEST(ProtectedStrings, TemplateTextIsUntouchedAndBrokenSentinelsStayAsTheyAre) {
  ProtectedStrings p({"<s>"});
  auto r = p.restore("<s>plain" + kLead + "no index");
  EXPECT_EQ(r.text, "<s>plain" + kLead + "no index");
  EXPECT_TRUE(r.literal.empty());
}

// The walk keeps its own stack: how deeply a context nests (it holds what clients sent) does
// not decide how deep this thread's stack goes. 200,000 levels, alternating arrays and
// objects, with the protected text at the bottom and in every object's key.
TEST(ProtectedStrings, DeepContextIsWalkedWithoutRecursion) {
  ProtectedStrings p({"<s>"});
  constexpr int kDepth = 200000;
  ojson v = "x<s>";
  for (int i = 0; i < kDepth; ++i) {
    ojson outer = i % 2 ? ojson::object() : ojson::array();
    if (i % 2)
      outer["k<s>"] = std::move(v);
    else
      outer.push_back(std::move(v));
    v = std::move(outer);
  }
  p.protect(v);
  const ojson* at = &v;
  for (int i = kDepth - 1; i >= 0; --i) {
    if (i % 2) {
      ASSERT_TRUE(at->is_object() && at->size() == 1u) << i;
      ASSERT_EQ(at->begin().key().find("<s>"), std::string::npos) << i;
    } else {
      ASSERT_TRUE(at->is_array() && at->size() == 1u) << i;
    }
    at = &at->front();
  }
  ASSERT_TRUE(at->is_string());
  EXPECT_EQ(p.restore(at->get<std::string>()).text, "x<s>");
}

}  // namespace
}  // namespace baton::chat
