#include "bench/prompt_text.h"

#include <cmath>
#include <iterator>
#include <string_view>

namespace baton::bench {
namespace {

constexpr std::string_view kWords[] = {
    "the",    "of",       "and",        "to",     "in",        "is",        "was",     "for",
    "on",     "that",     "with",       "as",     "it",        "by",        "at",      "from",
    "his",    "an",       "were",       "are",    "which",     "this",      "be",      "or",
    "has",    "had",      "one",        "first",  "new",       "their",     "after",   "not",
    "who",    "its",      "but",        "two",    "they",      "her",       "have",    "she",
    "also",   "been",     "other",      "when",   "time",      "there",     "all",     "during",
    "into",   "school",   "more",       "may",    "years",     "over",      "only",    "year",
    "most",   "would",    "world",      "city",   "some",      "where",     "between", "later",
    "three",  "state",    "such",       "then",   "national",  "used",      "made",    "known",
    "under",  "many",     "university", "united", "while",     "part",      "season",  "team",
    "these",  "american", "than",       "film",   "second",    "born",      "south",   "became",
    "states", "war",      "through",    "being",  "including", "both",      "before",  "north",
    "high",   "however",  "people",     "family", "early",     "history",   "album",   "area",
    "since",  "him",      "original",   "work",   "until",     "following", "day",     "well",
    "game",   "life",     "number",     "group",  "called",    "music",     "around",  "series",
    "each",   "house",    "them",       "long",   "band",      "four",      "name",    "river",
};

}  // namespace

std::uint64_t mix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

long words_for_tokens(long tokens, double unit) {
  if (tokens <= 0) return 0;
  if (!(unit > 0)) unit = 1.0;
  long w = std::lround(static_cast<double>(tokens) * unit);
  return w < 1 ? 1 : w;
}

std::string prompt_words(long words, std::uint64_t seed) {
  std::string out;
  out.reserve(static_cast<std::size_t>(words > 0 ? words : 0) * 6);
  std::uint64_t state = seed * 0x2545f4914f6cdd1dULL + 1;
  for (long i = 0; i < words; ++i) {
    if (i > 0) out.push_back(' ');
    out.append(kWords[mix64(state) % std::size(kWords)]);
  }
  return out;
}

std::string make_prompt(long tokens, double unit, std::uint64_t seed) {
  return prompt_words(words_for_tokens(tokens, unit), seed);
}

}  // namespace baton::bench
