#include "tokenizer/pretokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <fmt/format.h>
#include <pcre2.h>

#include <stdexcept>

#include "tokenizer/utf8.h"

namespace baton::tokenizer {
namespace {

// The regex lists are llama.cpp's (src/llama-vocab.cpp, llm_tokenizer_bpe), written out again.
constexpr const char* kGpt2 =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
constexpr const char* kLlama3 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
    "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
constexpr const char* kQwen2 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
    "\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
constexpr const char* kCjk = "[\\x{4E00}-\\x{9FA5}\\x{800}-\\x{4E00}\\x{AC00}-\\x{D7FF}]+";
constexpr const char* kDeepseekLlmLetters =
    "\\s?[A-Za-z\\x{B5}\\x{C0}-\\x{D6}\\x{D8}-\\x{F6}\\x{F8}-\\x{1BA}\\x{1BC}-\\x{1BF}\\x{1C4}-"
    "\\x{293}\\x{295}-\\x{2AF}\\x{370}-\\x{373}\\x{376}\\x{377}\\x{37B}-\\x{37D}\\x{37F}"
    "\\x{386}\\x{388}-\\x{38A}\\x{38C}\\x{38E}-\\x{3A1}\\x{3A3}-\\x{3F5}\\x{3F7}-\\x{481}"
    "\\x{48A}-\\x{52F}\\x{531}-\\x{556}\\x{10A0}-\\x{10C5}\\x{13A0}-\\x{13F5}\\x{13F8}-"
    "\\x{13FD}\\x{1C90}-\\x{1CBA}\\x{1CBD}-\\x{1CBF}\\x{1D00}-\\x{1D2B}\\x{1D6B}-\\x{1D77}"
    "\\x{1D79}-\\x{1D9A}\\x{1E00}-\\x{1F15}\\x{1F18}-\\x{1F1D}\\x{1F20}-\\x{1F45}\\x{1F48}-"
    "\\x{1F4D}\\x{1F50}-\\x{1F57}\\x{1F59}\\x{1F5B}\\x{1F5D}\\x{1F5F}-\\x{1F7D}\\x{1F80}-"
    "\\x{1FB4}\\x{1FB6}-\\x{1FBC}\\x{1FBE}\\x{1FC2}-\\x{1FC4}\\x{1FC6}-\\x{1FCC}\\x{1FD0}-"
    "\\x{1FD3}\\x{1FD6}-\\x{1FDB}\\x{1FE0}-\\x{1FEC}\\x{1FF2}-\\x{1FF4}\\x{1FF6}-\\x{1FFC}"
    "\\x{2102}\\x{2107}\\x{210A}-\\x{2113}\\x{2115}\\x{2119}-\\x{211D}\\x{2124}\\x{2126}"
    "\\x{2128}\\x{212A}-\\x{212D}\\x{212F}-\\x{2134}\\x{2139}\\x{213C}-\\x{213F}\\x{2145}-"
    "\\x{2149}\\x{214E}\\x{2183}\\x{2184}\\x{2C00}-\\x{2C7B}\\x{2C7E}-\\x{2CE4}\\x{2CEB}-"
    "\\x{2CEE}\\x{2CF2}\\x{2CF3}\\x{A640}-\\x{A66D}\\x{A680}-\\x{A69B}\\x{A722}-\\x{A76F}"
    "\\x{A771}-\\x{A787}\\x{A78B}-\\x{A78E}\\x{AB70}-\\x{ABBF}\\x{FB00}-\\x{FB06}\\x{FB13}-"
    "\\x{FB17}\\x{FF21}-\\x{FF3A}\\x{FF41}-\\x{FF5A}\\x{10400}-\\x{1044F}\\x{104B0}-"
    "\\x{104D3}\\x{104D8}-\\x{104FB}\\x{10C80}-\\x{10CB2}\\x{10CC0}-\\x{10CF2}\\x{118A0}-"
    "\\x{118DF}\\x{1E900}-\\x{1E943}]+";

struct PreSet {
  std::vector<std::string> names;
  std::vector<const char*> regexes;
  bool ignore_merges = false;
};

const std::vector<PreSet>& pre_sets() {
  static const std::vector<PreSet> sets = {
      {{"default"}, {"[\\p{P}\\$\\+<=>\\^~\\|]+", kGpt2, "\\p{N}+", "[0-9][0-9][0-9]"}},
      {{"gpt-2", "mpt", "olmo", "jais", "phi-2"}, {kGpt2}},
      {{"llama3", "llama-v3", "llama-bpe", "falcon3"}, {kLlama3}, true},
      {{"dbrx", "smaug-bpe"}, {kLlama3}},
      {{"qwen2", "stablelm2", "deepseek-r1-qwen"}, {kQwen2}},
      {{"deepseek-llm"},
       {"[\r\n]", kDeepseekLlmLetters,
        "\\s?[!-/:-~\\x{FF01}-\\x{FF0F}\\x{FF1A}-\\x{FF5E}\\x{2018}-\\x{201F}\\x{3000}-\\x{3002}]+",
        "\\s+$", kCjk, "\\p{N}+"}},
      {{"deepseek-coder"}, {"[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", kCjk, "\\p{N}"}},
      {{"falcon"}, {"[\\p{P}\\$\\+<=>\\^~\\|`]+", kGpt2, "[0-9][0-9][0-9]"}},
      {{"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone"}, {"\\p{N}", kGpt2}},
  };
  return sets;
}

// PCRE2's \s (with UCP) leaves out U+0085, which the Unicode White_Space property (and so the
// reference tokenizers) count as space; widen \s and \S accordingly.
std::string widen_space_classes(std::string_view re) {
  std::string out;
  bool in_class = false;
  for (size_t i = 0; i < re.size(); ++i) {
    const char c = re[i];
    if (c == '\\' && i + 1 < re.size()) {
      const char n = re[i + 1];
      ++i;
      if (n == 's') {
        out += in_class ? "\\s\\x{85}" : "[\\s\\x{85}]";
      } else if (n == 'S' && !in_class) {
        out += "[^\\s\\x{85}]";
      } else {
        out += c;
        out += n;
      }
      continue;
    }
    if (c == '[' && !in_class)
      in_class = true;
    else if (c == ']' && in_class)
      in_class = false;
    out += c;
  }
  return out;
}

}  // namespace

struct Pretokenizer::Regex {
  pcre2_code* code = nullptr;
  ~Regex() { pcre2_code_free(code); }
};

Pretokenizer::~Pretokenizer() = default;

std::vector<std::string> Pretokenizer::supported_names() {
  std::vector<std::string> names;
  for (const auto& s : pre_sets()) names.insert(names.end(), s.names.begin(), s.names.end());
  return names;
}

std::unique_ptr<Pretokenizer> Pretokenizer::create(std::string_view pre) {
  const std::string_view name = pre.empty() ? "default" : pre;
  const PreSet* found = nullptr;
  for (const auto& s : pre_sets()) {
    for (const auto& n : s.names) {
      if (n == name) found = &s;
    }
  }
  if (!found) {
    throw std::runtime_error(
        fmt::format("tokenizer.ggml.pre = \"{}\" is not a supported pre-tokenizer; supported: {}",
                    name, fmt::join(supported_names(), ", ")));
  }
  std::unique_ptr<Pretokenizer> p(new Pretokenizer());
  p->ignore_merges_ = found->ignore_merges;
  for (const char* expr : found->regexes) {
    const std::string pattern = widen_space_classes(expr);
    int err = 0;
    PCRE2_SIZE err_off = 0;
    auto re = std::make_unique<Regex>();
    // std::regex semantics: '$' only at the very end of the chunk.
    re->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                             PCRE2_UTF | PCRE2_UCP | PCRE2_DOLLAR_ENDONLY, &err, &err_off, nullptr);
    if (!re->code) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(err, msg, sizeof(msg));
      throw std::runtime_error(fmt::format("pre-tokenizer \"{}\": regex does not compile at {}: {}",
                                           name, err_off, reinterpret_cast<const char*>(msg)));
    }
    pcre2_jit_compile(re->code, PCRE2_JIT_COMPLETE);  // interpreter fallback when unavailable
    p->regexes_.push_back(std::move(re));
  }
  return p;
}

std::vector<std::pair<size_t, size_t>> Pretokenizer::split(std::string_view text) const {
  std::vector<std::pair<size_t, size_t>> out;
  size_t i = 0;
  while (i < text.size()) {
    // Gather the next run of valid UTF-8, then any invalid bytes one by one.
    const size_t run = utf8::valid_prefix(text.substr(i));
    if (run > 0) {
      split_valid(text.substr(i, run), i, out);
      i += run;
      continue;
    }
    const auto s = utf8::scan(text, i);
    for (size_t k = 0; k < s.len; ++k) out.emplace_back(i + k, 1);
    i += s.len;
  }
  return out;
}

void Pretokenizer::split_valid(std::string_view text, size_t base,
                               std::vector<std::pair<size_t, size_t>>& out) const {
  std::vector<std::pair<size_t, size_t>> chunks{{0, text.size()}}, next;
  pcre2_match_data* md = pcre2_match_data_create(1, nullptr);
  for (const auto& re : regexes_) {
    next.clear();
    for (const auto& [off, len] : chunks) {
      const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data() + off);
      size_t pos = 0, emitted = 0;
      while (pos < len) {
        const int rc = pcre2_match(re->code, subject, len, pos, PCRE2_NO_UTF_CHECK, md, nullptr);
        if (rc < 0) break;
        const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
        size_t ms = ov[0], me = ov[1];
        if (me == ms) {  // none of the lists can match empty; guard against looping anyway
          size_t l = 1;
          utf8::decode_cpt(text, off + ms, &l);
          pos = ms + l;
          continue;
        }
        if (ms > emitted) next.emplace_back(off + emitted, ms - emitted);
        next.emplace_back(off + ms, me - ms);
        pos = emitted = me;
      }
      if (emitted < len) next.emplace_back(off + emitted, len - emitted);
    }
    chunks.swap(next);
  }
  pcre2_match_data_free(md);
  for (const auto& [off, len] : chunks) out.emplace_back(base + off, len);
}

}  // namespace baton::tokenizer
