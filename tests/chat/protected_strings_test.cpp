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

}  // namespace
}  // namespace baton::chat
