// The SAX-to-document builder every JSON text from a client is parsed with.
#include "util/json_builder.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace baton::util {
namespace {

const char* const kMixed =
    R"({"z":1,"a":[true,null,-2,3.5,"s",{"y":{},"x":[]}],"m":{"k":"v","b":18446744073709551615}})";

template <class Json>
Json built(const std::string& text) {
  Json out;
  EXPECT_TRUE(build_json(text, out)) << text;
  return out;
}

TEST(JsonBuilder, BuildsWhatNlohmannsParserBuilds) {
  EXPECT_EQ(built<nlohmann::json>(kMixed), nlohmann::json::parse(kMixed));
  EXPECT_EQ(built<nlohmann::ordered_json>(kMixed), nlohmann::ordered_json::parse(kMixed));
  EXPECT_EQ(built<nlohmann::ordered_json>(kMixed).dump(),
            nlohmann::ordered_json::parse(kMixed).dump());
  for (const char* scalar : {"7", "\"s\"", "null", "[]", "{}", "-0.5e3"}) {
    EXPECT_EQ(built<nlohmann::ordered_json>(scalar), nlohmann::ordered_json::parse(scalar));
  }
}

TEST(JsonBuilder, KeepsTheClientsKeyOrder) {
  auto doc = built<nlohmann::ordered_json>(R"({"zeta":1,"alpha":2,"mid":{"q":1,"b":2}})");
  EXPECT_EQ(doc.dump(), R"({"zeta":1,"alpha":2,"mid":{"q":1,"b":2}})");
}

// As nlohmann's own builder: a repeated key keeps its first place and takes the last value, in
// small objects (scanned) and large ones (indexed) alike.
TEST(JsonBuilder, ARepeatedKeyKeepsItsPlaceAndTakesTheLastValue) {
  EXPECT_EQ(built<nlohmann::ordered_json>(R"({"a":1,"b":2,"a":3})").dump(), R"({"a":3,"b":2})");
  std::string text = "{";
  for (int i = 0; i < 40; ++i) text += "\"k" + std::to_string(i) + "\":" + std::to_string(i) + ",";
  text += R"("k3":"again","k39":{"deep":[1]},"new":0})";
  auto doc = built<nlohmann::ordered_json>(text);
  EXPECT_EQ(doc, nlohmann::ordered_json::parse(text));
  EXPECT_EQ(doc.dump(), nlohmann::ordered_json::parse(text).dump());
  EXPECT_EQ(doc.size(), 41u);
  EXPECT_EQ(doc.begin().key(), "k0");
  EXPECT_EQ(doc["k3"], "again");
}

// 300,000 members: nlohmann's ordered builder scans the object for every key (O(N²), over a
// minute); this one indexes them. Checked by result, not by time: a quadratic builder would
// still pass, but make this test take minutes.
TEST(JsonBuilder, AWideObjectIsBuiltMemberByMember) {
  constexpr int kMembers = 300000;
  std::string text = "{";
  for (int i = 0; i < kMembers; ++i) text += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":0";
  text += "}";
  auto doc = built<nlohmann::ordered_json>(text);
  ASSERT_EQ(doc.size(), size_t(kMembers));
  const auto& members = doc.get_ref<const nlohmann::ordered_json::object_t&>();
  EXPECT_EQ(members.front().first, "k0");
  EXPECT_EQ(members.back().first, "k" + std::to_string(kMembers - 1));
}

TEST(JsonBuilder, InvalidTextGivesADiscardedValue) {
  for (const char* bad : {"", "{", R"({"a":})", "[1,]", "{} x", R"({"a" 1})"}) {
    nlohmann::ordered_json out;
    EXPECT_FALSE(build_json(bad, out)) << bad;
    EXPECT_TRUE(out.is_discarded()) << bad;
  }
}

}  // namespace
}  // namespace baton::util
