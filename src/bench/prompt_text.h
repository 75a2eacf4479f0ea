#pragma once
// Deterministic prompt text of a requested size. Words come from a fixed list of short, common
// English words that are one token each on typical BPE vocabularies, so N words ≈ N tokens;
// --prompt-unit rescales that estimate for vocabularies where it does not hold.
#include <cstdint>
#include <string>

namespace baton::bench {

// Words to emit for `tokens` tokens at `unit` words per token (at least 1 word when tokens > 0).
long words_for_tokens(long tokens, double unit);

// `words` words picked by a PRNG seeded with `seed`: the same seed always gives the same text,
// different seeds diverge from the first word on, so prefix caches only help when a scenario
// reuses a seed on purpose.
std::string prompt_words(long words, std::uint64_t seed);

// prompt_words(words_for_tokens(tokens, unit), seed).
std::string make_prompt(long tokens, double unit, std::uint64_t seed);

// The deterministic pseudo-random generator used everywhere in the bench (splitmix64).
std::uint64_t mix64(std::uint64_t& state);

}  // namespace baton::bench
