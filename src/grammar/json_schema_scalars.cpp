#include "grammar/json_schema_scalars.h"

#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "grammar/grammar.h"

namespace baton::grammar::schema_detail {
namespace {

std::string join_alts(const std::vector<std::string>& alts) {
  if (alts.empty()) return "";
  if (alts.size() == 1) return alts[0];
  std::string out = "(";
  for (size_t i = 0; i < alts.size(); ++i) out += (i ? " | " : "") + alts[i];
  return out + ")";
}

std::string digit_class(char lo, char hi) {
  if (lo == hi) return fmt::format("\"{}\"", lo);
  if (lo == '0' && hi == '9') return "[0-9]";
  return fmt::format("[{}-{}]", lo, hi);
}

std::string any_digits(size_t n) {
  if (n == 0) return "";
  if (n == 1) return "[0-9]";
  return fmt::format("[0-9]{{{}}}", n);
}

bool all_of(const std::string& s, size_t from, char c) {
  for (size_t i = from; i < s.size(); ++i) {
    if (s[i] != c) return false;
  }
  return true;
}

// Digit strings of one length between lo and hi (lo <= hi, equal lengths): one digit at a time,
// splitting where the two bounds first differ.
std::string same_length_range(const std::string& lo, const std::string& hi) {
  if (lo.empty()) return "";
  if (lo[0] == hi[0]) {
    const std::string rest = same_length_range(lo.substr(1), hi.substr(1));
    return digit_class(lo[0], lo[0]) + (rest.empty() ? "" : " " + rest);
  }
  const size_t n = lo.size() - 1;
  if (all_of(lo, 1, '0') && all_of(hi, 1, '9')) {
    return n ? fmt::format("{} {}", digit_class(lo[0], hi[0]), any_digits(n))
             : digit_class(lo[0], hi[0]);
  }
  std::vector<std::string> alts;
  alts.push_back(digit_class(lo[0], lo[0]) + " " +
                 same_length_range(lo.substr(1), std::string(n, '9')));
  if (lo[0] + 1 <= hi[0] - 1) {
    alts.push_back(digit_class(static_cast<char>(lo[0] + 1), static_cast<char>(hi[0] - 1)) + " " +
                   any_digits(n));
  }
  alts.push_back(digit_class(hi[0], hi[0]) + " " +
                 same_length_range(std::string(n, '0'), hi.substr(1)));
  return join_alts(alts);
}

// Natural numbers in [lo, hi] without leading zeros (0 <= lo <= hi).
std::string natural_range(int64_t lo, int64_t hi) {
  std::vector<std::string> alts;
  std::string a = std::to_string(lo);
  const std::string b = std::to_string(hi);
  while (a.size() < b.size()) {
    alts.push_back(same_length_range(a, std::string(a.size(), '9')));
    a.assign(a.size() + 1, '0');
    a[0] = '1';
  }
  alts.push_back(same_length_range(a, b));
  return join_alts(alts);
}

// The fraction of a decimal: never ends in 0, so k.f is strictly between k and k + 1.
constexpr const char* kFraction = "\".\" [0-9]{0,14} [1-9]";

int64_t clamp_int(double v) {
  if (v > static_cast<double>(kMaxUnboundedInt)) return kMaxUnboundedInt + 1;
  if (v < -static_cast<double>(kMaxUnboundedInt)) return -kMaxUnboundedInt - 1;
  return static_cast<int64_t>(v);
}

// The least integer that satisfies a lower bound, and the greatest for an upper one.
int64_t least_int(const std::optional<Bound>& min) {
  if (!min) return -kMaxUnboundedInt;
  double v = std::ceil(min->value);
  if (min->exclusive && v == min->value) v += 1;
  return std::max(clamp_int(v), -kMaxUnboundedInt);
}
int64_t greatest_int(const std::optional<Bound>& max) {
  if (!max) return kMaxUnboundedInt;
  double v = std::floor(max->value);
  if (max->exclusive && v == max->value) v -= 1;
  return std::min(clamp_int(v), kMaxUnboundedInt);
}

}  // namespace

std::string integer_range(int64_t lo, int64_t hi) {
  std::vector<std::string> alts;
  if (hi >= 0 && lo <= hi) alts.push_back(natural_range(std::max<int64_t>(lo, 0), hi));
  if (lo < 0 && lo <= hi) {
    const int64_t abs_lo = std::max<int64_t>(1, hi < 0 ? -hi : 1);
    alts.push_back("\"-\" " + natural_range(abs_lo, -lo));
  }
  return join_alts(alts);
}

std::string bounded_integer(const std::optional<Bound>& min, const std::optional<Bound>& max) {
  return integer_range(least_int(min), greatest_int(max));
}

std::string bounded_number(const std::optional<Bound>& min, const std::optional<Bound>& max) {
  if (!min && !max) {
    // Two exponent digits keep every value finite in a double: 1e380 parses as Infinity,
    // which no validator accepts as a number.
    return R"("-"? ("0" | [1-9] [0-9]{0,15}) ("." [0-9]{1,16})? ([eE] [-+]? [0-9]{1,2})?)";
  }
  std::vector<std::string> alts;
  if (std::string ints = bounded_integer(min, max); !ints.empty()) alts.push_back(ints);
  // k.f with k >= 0 lies in (k, k + 1): needs k >= min (k > min is not needed: k.f > k) and
  // k + 1 <= max. Exclusive bounds hold too, since the value never touches k or k + 1.
  const double lo = min ? min->value : -static_cast<double>(kMaxUnboundedInt);
  const double hi = max ? max->value : static_cast<double>(kMaxUnboundedInt);
  const int64_t pos_lo = std::max<int64_t>(0, clamp_int(std::ceil(lo)));
  const int64_t pos_hi = std::min(clamp_int(std::floor(hi)) - 1, kMaxUnboundedInt);
  if (pos_lo <= pos_hi) alts.push_back(natural_range(pos_lo, pos_hi) + " " + kFraction);
  // -k.f lies in (-(k + 1), -k): needs -(k + 1) >= min and -k <= max.
  const int64_t neg_lo = std::max<int64_t>(0, clamp_int(std::ceil(-hi)));
  const int64_t neg_hi = std::min(clamp_int(std::floor(-lo)) - 1, kMaxUnboundedInt);
  if (neg_lo <= neg_hi) alts.push_back("\"-\" " + natural_range(neg_lo, neg_hi) + " " + kFraction);
  return join_alts(alts);
}

std::string class_char(uint32_t cp) {
  if (cp < 0x20 || cp == 0x7F) return fmt::format("\\x{:02X}", cp);
  if (cp < 0x80) {
    const char c = static_cast<char>(cp);
    if (c == ']' || c == '[' || c == '-' || c == '^' || c == '\\' || c == '"') {
      return std::string("\\") + c;
    }
    return std::string(1, c);
  }
  if (cp < 0x10000) return fmt::format("\\u{:04X}", cp);
  return fmt::format("\\U{:08X}", cp);
}

namespace {

// An email address of at most max_len characters (at least 6: a@b.cd): one domain label and a
// short top-level domain, the rest split between the local part and the label.
std::string short_email(int64_t max_len) {
  const int64_t rest = max_len - 5;  // "@", ".", and up to 3 letters of TLD
  const int64_t local = std::min<int64_t>((rest + 1) / 2, 64);
  const int64_t label = std::min<int64_t>(rest - local, 63);
  return fmt::format(
      R"("\"" [a-zA-Z0-9_+-]{{1,{}}} "@" [a-zA-Z0-9]{{1,{}}} "." [a-zA-Z]{{2,3}} "\"")", local,
      label);
}

}  // namespace

std::string format_string(const std::string& format, const std::string& where, int64_t min_len,
                          int64_t max_len) {
  // February stops at 28 so that every date is valid in every year.
  static const std::string date =
      R"([0-9]{4} "-" (("0" [13578] | "1" [02]) "-" ("0" [1-9] | [12] [0-9] | "3" [01]) | )"
      R"(("0" [469] | "11") "-" ("0" [1-9] | [12] [0-9] | "30") | "02-" ("0" [1-9] | "1" [0-9] | "2" [0-8])))";
  // RFC 3339 full-time: validators that require the offset and those that do not both accept it.
  static const std::string time =
      R"(([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9] ":" [0-5] [0-9] ("." [0-9]{1,6})? )"
      R"(("Z" | [+-] ([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9]))";
  static const std::string quote = R"("\"")";
  // Each format's shortest and longest spelling, checked against minLength / maxLength.
  struct Spec {
    const char* name;
    int64_t shortest, longest;
    std::string gbnf;
  };
  static const Spec specs[] = {
      {"date", 10, 10, quote + " " + date + " " + quote},
      {"time", 9, 21, quote + " " + time + " " + quote},
      {"date-time", 20, 32, quote + " " + date + " \"T\" " + time + " " + quote},
      {"uuid", 36, 36,
       R"("\"" [0-9a-f]{8} "-" [0-9a-f]{4} "-" [0-9a-f]{4} "-" [0-9a-f]{4} "-" [0-9a-f]{12} "\"")"},
      // A conservative subset of RFC 5321 addresses that every validator's email check accepts.
      {"email", 6, 209,
       R"("\"" [a-zA-Z0-9_+-]{1,32} ("." [a-zA-Z0-9_+-]{1,32}){0,3} "@" )"
       R"(([a-zA-Z0-9] ([a-zA-Z0-9-]{0,20} [a-zA-Z0-9])? "."){1,3} [a-zA-Z]{2,8} "\"")"},
  };
  for (const auto& spec : specs) {
    if (format != spec.name) continue;
    const bool fits_max = max_len < 0 || spec.longest <= max_len;
    if (spec.shortest >= min_len && fits_max) return spec.gbnf;
    if (format == "email" && min_len <= spec.shortest && max_len >= 8) {
      return short_email(max_len);
    }
    throw GrammarError(fmt::format(
        "format '{}' at {} is {} to {} characters long, which minLength / maxLength ({} to {}) "
        "do not allow; widen the bounds or drop them",
        format, where, spec.shortest, spec.longest, min_len,
        max_len < 0 ? "any" : std::to_string(max_len)));
  }
  throw GrammarError(fmt::format(
      "unsupported JSON Schema format '{}' at {} (supported: date, time, date-time, uuid, email)",
      format, where));
}

}  // namespace baton::grammar::schema_detail
