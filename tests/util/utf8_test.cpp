// The project's one UTF-8 encoder at every length boundary.
#include "util/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace baton::util {
namespace {

TEST(Utf8, EncodesEachLengthAtItsBoundaries) {
  const std::pair<uint32_t, std::string> cases[] = {{0x00, std::string(1, '\0')},
                                                    {0x7F, "\x7F"},
                                                    {0x80, "\xC2\x80"},
                                                    {0x7FF, "\xDF\xBF"},
                                                    {0x800, "\xE0\xA0\x80"},
                                                    {0xFFFD, "\xEF\xBF\xBD"},
                                                    {0xFFFF, "\xEF\xBF\xBF"},
                                                    {0x10000, "\xF0\x90\x80\x80"},
                                                    {0x10FFFF, "\xF4\x8F\xBF\xBF"}};
  for (const auto& [cp, bytes] : cases) {
    std::string out = "x";
    append_utf8(out, cp);
    EXPECT_EQ(out, "x" + bytes) << std::hex << cp;
    EXPECT_EQ(utf8_length(cp), static_cast<int>(bytes.size())) << std::hex << cp;
  }
}

}  // namespace
}  // namespace baton::util
