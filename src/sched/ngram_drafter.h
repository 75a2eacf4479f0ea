#pragma once
// Draft tokens without a draft model: an agent's output repeats its input (an edit re-emits
// most of the file it read, a tool call repeats paths and identifiers), so the tokens that
// followed the latest earlier occurrence of the sequence's last few tokens are a good guess
// for what comes next. The engine loop checks every guess against the model in one step
// (sched/loop_speculate.cpp), so a wrong guess costs a row of compute, never a wrong token.
#include <cstdint>
#include <span>
#include <vector>

namespace baton::sched {

struct NgramDraftOptions {
  int32_t max_ngram = 4;  // the longest suffix looked up
  int32_t min_ngram = 2;  // a single matching token is too weak a reason to spend rows
  int32_t max_draft = 8;  // tokens proposed at most
};

// The tokens that followed the most recent earlier occurrence of the longest suffix of `tokens`
// (between min_ngram and max_ngram tokens long) that occurred before; empty when none did.
// A scan of the whole sequence, newest first: O(length × max_ngram) per call.
std::vector<int32_t> ngram_draft(std::span<const int32_t> tokens, const NgramDraftOptions& o);

// The tokens that followed the newest occurrence of `pattern` in `text` that some token follows,
// at most max_draft of them; empty when there is none. Newest first: the latest occurrence is the
// likeliest to continue the same way. Both drafters (a request's own sequence, recent outputs)
// search with it.
std::vector<int32_t> continuation_after(std::span<const int32_t> text,
                                        std::span<const int32_t> pattern, int32_t max_draft);

// The next draft length of a request after a verify that proposed `drafted` tokens and had
// `accepted` of them confirmed: longer after a full acceptance, shorter after a miss, within
// 1..max_draft.
int32_t next_draft_length(int32_t current, int32_t drafted, int32_t accepted, int32_t max_draft);

}  // namespace baton::sched
