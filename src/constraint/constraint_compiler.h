#pragma once
// Structured output for one request: what was asked for (a JSON Schema, a grammar, a regex, a
// choice), the grammar it compiles to (cached by its text), and the engine-loop constraint that
// masks each step's tokens with it. The server reads the spec from its request fields
// (server/api/constraint_fields.h); `baton run` builds one from its flags.
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/token_constraint.h"
#include "grammar/grammar.h"
#include "grammar/token_mask.h"
#include "tokenizer/text_codec.h"

namespace baton::constraint {

struct ConstraintSpec {
  enum class Kind { None, JsonObject, JsonSchema, Grammar, Regex, Choice };
  Kind kind = Kind::None;
  nlohmann::ordered_json schema;     // JsonSchema, with the key order its writer gave
  std::string text;                  // Grammar (GBNF) / Regex
  std::vector<std::string> choices;  // Choice
  std::string field;                 // the request field (or flag), for error messages
  bool active() const { return kind != Kind::None; }
};

// A spec that does not compile: `field` names what asked for it, `code` the kind of fault
// ("invalid_grammar"); the message says what is wrong and where. The server answers it with a
// 400 naming the field, `baton run` with a one-line error.
struct ConstraintError : std::runtime_error {
  ConstraintError(const std::string& message, std::string field, std::string code)
      : std::runtime_error(message), field(std::move(field)), code(std::move(code)) {}
  std::string field;
  std::string code;
};

// A constrained answer ends complete within its budget (the mask plans for it) only when the
// shortest output the constraint allows fits; below that, every answer would be cut off. Throws
// a ConstraintError naming `budget` (the setting: "max_tokens", "-n") with code
// "max_tokens_too_small" and both numbers, or "unspellable_constraint" when this vocabulary can
// spell no output at all. `is_default`: the budget was not given, so the message says so.
void require_room(const engine::TokenConstraint& c, int32_t budget_tokens,
                  const std::string& budget, bool is_default = false);

// The GBNF text that a spec stands for. Throws grammar::GrammarError.
std::string constraint_gbnf(const ConstraintSpec& spec);

// Compiles specs (a GrammarError becomes a ConstraintError naming the field) and keeps the most
// recently used grammars, so a client that sends the same schema on every request compiles it
// once. Builds the vocabulary trie on first use. Thread-safe.
class ConstraintCompiler {
 public:
  // The cache keeps at most this many grammars and this many bytes of them (text and compiled
  // form); a grammar over an eighth of the bytes serves its own request and is not kept.
  static constexpr size_t kCachedGrammars = 64;
  static constexpr size_t kCachedGrammarBytes = size_t{128} << 20;

  explicit ConstraintCompiler(const tokenizer::TextCodec& codec) : codec_(codec) {}
  std::shared_ptr<const grammar::Grammar> compile(const ConstraintSpec& spec);
  // Compiles GBNF text built by the server itself (tool-call grammars), cached the same way.
  std::shared_ptr<const grammar::Grammar> compile_gbnf(const std::string& gbnf,
                                                       const std::string& field);
  // markers: control-token texts the grammar may spell with their token (a tool-call format's
  // markup, e.g. "<|python_tag|>"); every other control token stays out of constrained output.
  // max_tokens >= 0: the output is planned to end complete within that many tokens.
  std::shared_ptr<engine::TokenConstraint> make(std::shared_ptr<const grammar::Grammar> g,
                                                const std::vector<std::string>& markers = {},
                                                int32_t max_tokens = -1);
  std::shared_ptr<const grammar::VocabTrie> vocab(const std::vector<std::string>& markers = {});
  size_t cached_bytes() const;
  size_t cached_grammars() const;

 private:
  struct CachedGrammar {
    std::string gbnf;
    std::shared_ptr<const grammar::Grammar> grammar;
    size_t bytes = 0;
  };
  const tokenizer::TextCodec& codec_;
  mutable std::mutex mu_;
  std::shared_ptr<const grammar::VocabTrie> vocab_;
  std::vector<std::string> vocab_markers_;
  std::shared_ptr<const grammar::VocabTrie> marker_vocab_;  // for vocab_markers_
  // Most recent first; small, so a linear scan is cheaper than a map and an LRU list.
  std::vector<CachedGrammar> cache_;
  size_t cache_bytes_ = 0;
};

}  // namespace baton::constraint
