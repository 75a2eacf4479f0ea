#pragma once
// Restricts which tokens may come next (structured output: a grammar, a JSON schema). The
// generator asks for the mask before sampling a row and reports the token it chose. The engine
// loop calls it on its own thread, never concurrently, and only for its own request.
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace baton::engine {

// The request's own constraint cannot go on within the work a step may spend on it (a grammar
// that keeps too many parses open). The request's fault, not the server's: its client gets a
// 400 (or, streaming, an error event of that type) instead of a server error.
struct ConstraintBudgetExceeded : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class TokenConstraint {
 public:
  virtual ~TokenConstraint() = default;
  // One bit per vocabulary id (bit id % 64 of word id / 64): the tokens allowed next, end-of-
  // generation tokens included where the output may end. No bit set: nothing can follow.
  // nullptr: no restriction at this step (the sampler then does no mask work). It runs on the
  // engine loop, so its work must be bounded: past its budget it throws
  // ConstraintBudgetExceeded, and the loop fails this request alone with the message.
  virtual const std::vector<uint64_t>* allowed() = 0;
  // Advances past the sampled token (an allowed one, or an end-of-generation token).
  virtual void accept(int32_t token) = 0;
  // The output is complete and nothing may follow: generation ends here even for a model
  // without end-of-generation tokens.
  virtual bool complete() const = 0;
  // The fewest tokens that complete the output from where it stands (0: nothing is needed or
  // the constraint cannot tell). A request whose max_tokens is below it is refused up front.
  virtual int32_t min_tokens_to_complete() const { return 0; }
};

}  // namespace baton::engine
