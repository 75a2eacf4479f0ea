// libFuzzer entry for the structured-output compilers, which take request text: any input must
// compile or raise GrammarError, never crash, hang or blow up in memory. The first byte picks
// what the rest is: GBNF, a regex (plain, search, JSON-string body) or a JSON Schema. Whatever
// compiles is then driven the way a request drives it: a token mask over a small vocabulary
// and a walk over the bytes after the first NUL.
//
// With bit 3 of the first byte set, the rest is a seed that expand() grows to the sizes of
// hostile requests (tens of thousands of nested groups, rule chains of hundreds of thousands,
// repetition counts in the millions), which mutation of a 4 KB input never reaches: the next
// byte picks the shape, the two after it the size.
#include <fmt/format.h>

#include <algorithm>
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
      std::vector<std::string>{
          "",         "a",  "b",   "ab",   "{",   "}",   "\"", "\":",  ",",    " ",    "\n",
          "[",        "]",  "0",   "12",   "-",   ".",   "e",  "true", "null", "\xC3", "\xA9",
          "\xC3\xA9", "\\", "\\n", "x\"}", "abc", "mno", "zz", "(",    ")",    "aaaa"},
      std::vector<int32_t>{0});
  return v;
}

std::string repeat(std::string_view s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

// The seed grown to n: GBNF grammars for GBNF mode, patterns for the regex modes.
std::string expand(uint8_t mode, uint8_t shape, size_t n, std::string_view seed) {
  const std::string item = seed.empty() ? std::string("\"a\"") : std::string(seed);
  // No larger than a request body may be (the server reads at most 8 MB).
  n = std::min(n, (size_t{8} << 20) / (item.size() + 24));
  if (mode % 4 == 1 || mode % 4 == 2) {  // a regex
    if (shape % 2 == 0) return repeat("(", n) + item + repeat(")", n);
    return repeat("(" + item + "){0," + std::to_string(n % 10001) + "}", n / 10000 + 1);
  }
  switch (shape % 6) {
    case 0:  // groups inside groups
      return "root ::= " + repeat("(", n) + item + repeat(")", n) + "\n";
    case 1:    // a chain of rules, from the root down
    case 2: {  // ... and from the last rule up
      std::vector<std::string> lines{"root ::= r1 " + item};
      for (size_t i = 1; i < n; ++i) lines.push_back(fmt::format("r{} ::= r{} {}", i, i + 1, item));
      lines.push_back(fmt::format("r{} ::= {}", n, item));
      if (shape % 6 == 2) std::reverse(lines.begin(), lines.end());
      std::string out;
      for (const auto& l : lines) out += l + "\n";
      return out;
    }
    case 3:  // bounded repetitions, many of them
      return "root ::=" +
             repeat(" (" + item + "){0," + std::to_string(n % 10001) + "}", n / 10000 + 1) + "\n";
    case 4: {  // two ways down at every level: the start state doubles per level
      std::string out = "root ::= r1 \"x\" | r1 " + item + "\n";
      for (size_t i = 1; i < n; ++i) {
        out += fmt::format("r{} ::= r{} \"x\" | r{} {}\n", i, i + 1, i + 1, item);
      }
      return out + fmt::format("r{} ::= {}\n", n, item);
    }
    default:  // ambiguity: a letter run that every later letter may end
      return "root ::= [a-z]* " + item + " [a-z]{" + std::to_string(n % 10001) + "}\n";
  }
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

void drive(const std::shared_ptr<const Grammar>& g, std::string_view input, int steps) {
  TokenMatcher tm(g, vocab());
  for (int step = 0; step < steps; ++step) {
    const auto& bits = tm.allowed();
    int32_t pick = -1;
    for (int32_t id = 1; id < vocab()->n_vocab(); ++id) {
      if ((bits[id / 64] >> (id % 64)) & 1) pick = id;
    }
    if (pick < 0 || !tm.accept(pick)) break;
  }
  // Each byte may take a step's budget; the server never walks a long text byte by byte on
  // one grammar (a token's bytes were walked by its mask), so the walk stops at 16 steps' worth
  // to keep the fuzzer fast.
  Matcher m(g);
  for (char c : input) {
    if (m.work() > 16 * GrammarLimits::kStepWork || !m.accept_byte(static_cast<uint8_t>(c))) break;
  }
  volatile bool end = m.can_end();
  (void)end;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  const bool grow = (mode & 8) != 0 && mode % 4 != 3;
  if (grow && size < 4) return 0;
  const size_t head = grow ? 4 : 1;
  std::string_view all(reinterpret_cast<const char*>(data) + head, size - head);
  const size_t nul = all.find('\0');
  const std::string_view text = all.substr(0, nul);
  const std::string_view input = nul == std::string_view::npos ? "" : all.substr(nul + 1);
  try {
    if (grow) {
      // Up to 262140: past every limit, so the refusals are exercised as well as what fits.
      const size_t n = 1 + 4 * (size_t{data[2]} | size_t{data[3]} << 8);
      drive(Grammar::parse(compile(mode, expand(mode, data[1], n, text))), input, 16);
    } else {
      drive(Grammar::parse(compile(mode, text)), input, 16);
    }
  } catch (const GrammarError&) {
  }
  return 0;
}
