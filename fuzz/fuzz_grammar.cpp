// libFuzzer entry for the structured-output compilers, which take request text: any input must
// compile or raise GrammarError, never crash, hang or blow up in memory. The first byte picks
// what the rest is: GBNF, a regex (plain, search, JSON-string body) or a JSON Schema. Whatever
// compiles is then driven the way a request drives it: a token mask over a small vocabulary
// and a walk over the bytes after the first NUL.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "grammar/grammar.h"
#include "grammar/json_schema.h"
#include "grammar/regex_gbnf.h"
#include "grammar/token_mask.h"

namespace {

using namespace baton::grammar;

std::shared_ptr<const VocabTrie> vocab() {
  static auto v = std::make_shared<const VocabTrie>(
      std::vector<std::string>{"",     "a",    "b",    "ab",   "{",        "}",  "\"",  "\":", ",",
                               " ",    "\n",   "[",    "]",    "0",        "12", "-",   ".",   "e",
                               "true", "null", "\xC3", "\xA9", "\xC3\xA9", "\\", "\\n", "x\"}"},
      std::vector<int32_t>{0});
  return v;
}

std::string compile(uint8_t mode, std::string_view text) {
  if (mode % 4 == 3) {
    auto schema = nlohmann::ordered_json::parse(text, nullptr, false);
    if (schema.is_discarded()) return "";
    return json_schema_to_gbnf(schema);
  }
  if (mode % 4 == 0) return std::string(text);
  RegexOptions opts;
  opts.search = mode % 4 == 2;
  opts.json_string_body = (mode & 4) != 0;
  return "root ::= " + regex_to_gbnf(text, opts) + "\n";
}

void drive(const std::shared_ptr<const Grammar>& g, std::string_view input) {
  TokenMatcher tm(g, vocab());
  for (int step = 0; step < 16; ++step) {
    const auto& bits = tm.allowed();
    int32_t pick = -1;
    for (int32_t id = 1; id < vocab()->n_vocab(); ++id) {
      if ((bits[id / 64] >> (id % 64)) & 1) pick = id;
    }
    if (pick < 0 || !tm.accept(pick)) break;
  }
  Matcher m(g);
  for (char c : input) {
    if (!m.accept_byte(static_cast<uint8_t>(c))) break;
  }
  volatile bool end = m.can_end();
  (void)end;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view all(reinterpret_cast<const char*>(data) + 1, size - 1);
  const size_t nul = all.find('\0');
  const std::string_view text = all.substr(0, nul);
  const std::string_view input = nul == std::string_view::npos ? "" : all.substr(nul + 1);
  try {
    drive(Grammar::parse(compile(data[0], text)), input);
  } catch (const GrammarError&) {
  }
  return 0;
}
