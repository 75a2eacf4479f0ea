#include "toolcall/json_scan.h"

#include <gtest/gtest.h>

#include "toolcall/json_call.h"

namespace baton::toolcall::json {
namespace {

TEST(JsonScan, CompleteValuesEndWhereTheyEnd) {
  EXPECT_EQ(scan_value(R"({"a": [1, {"b": "}"}]} tail)", 0).end, 22u);
  EXPECT_EQ(scan_value(R"(  "x\"y" rest)", 0).end, 8u);
  EXPECT_EQ(scan_value("true,", 0).end, 4u);
  EXPECT_EQ(scan_value(R"({"a": 1})", 0).status, Status::complete);
  EXPECT_EQ(scan_value("[]", 0).status, Status::complete);
}

TEST(JsonScan, EveryPrefixOfAValueIsPartial) {
  std::string v = R"({"k": ["s\u00e9\n", -1.5e3, null, true, {}], "e": "\\"})";
  for (size_t i = 0; i < v.size(); ++i) {
    EXPECT_EQ(scan_value(v.substr(0, i), 0).status, Status::partial) << v.substr(0, i);
  }
  EXPECT_EQ(scan_value(v, 0).status, Status::complete);
}

TEST(JsonScan, InvalidTextIsInvalidWhereItStops) {
  EXPECT_EQ(scan_value(R"({"a" 1})", 0).status, Status::invalid);
  EXPECT_EQ(scan_value(R"({"a": tru })", 0).status, Status::invalid);
  EXPECT_EQ(scan_value(R"([1,])", 0).status, Status::invalid);
  EXPECT_EQ(scan_value(R"({"a": 1])", 0).end, 7u);
  EXPECT_EQ(scan_value("\"a\x01\"", 0).status, Status::invalid);
  EXPECT_EQ(scan_value(R"("\x")", 0).status, Status::invalid);
  EXPECT_EQ(scan_value(R"({'a': 1})", 0).status, Status::invalid);
}

TEST(JsonCall, NameArgumentsAndIdInAnyOrder) {
  auto c = scan_call(R"({"arguments": {"x": 1}, "id": "abc", "name": "f"})", 0,
                     {.name = "name", .arguments = "arguments", .alt_arguments = "", .id = "id"});
  EXPECT_EQ(c.status, Status::complete);
  EXPECT_EQ(*c.name, "f");
  EXPECT_EQ(*c.id, "abc");
  EXPECT_EQ(c.arguments, R"({"x": 1})");
}

TEST(JsonCall, ArgumentsStreamAsTheyAreWritten) {
  auto c = scan_call(R"({"name": "f", "arguments": {"x": "ab)", 0);
  EXPECT_EQ(c.status, Status::partial);
  EXPECT_EQ(*c.name, "f");
  EXPECT_EQ(c.arguments, R"({"x": "ab)");
  EXPECT_FALSE(c.arguments_complete);
}

TEST(JsonCall, ArgumentsAsAJsonStringAndMissingArguments) {
  auto c = scan_call(R"({"name": "f", "arguments": "{\"x\": 1}"})", 0);
  EXPECT_EQ(c.status, Status::complete);
  EXPECT_EQ(c.arguments, R"({"x": 1})");
  EXPECT_EQ(scan_call(R"({"name": "f"})", 0).arguments, "{}");
  EXPECT_EQ(scan_call(R"({"name": "f", "arguments": "nope"})", 0).status, Status::invalid);
  EXPECT_EQ(scan_call(R"({"name": 3, "arguments": {}})", 0).status, Status::invalid);
  EXPECT_EQ(scan_call(R"({"arguments": {}})", 0).status, Status::invalid);
  EXPECT_EQ(scan_call(R"({"name": "f", "arguments": {"a": 1-2}})", 0).status, Status::invalid);
}

}  // namespace
}  // namespace baton::toolcall::json
