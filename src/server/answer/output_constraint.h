#pragma once
// Structured output for one request: which request field asked for it (response_format,
// grammar, regex, ...), the grammar it compiles to (cached by its text), and the engine-loop
// constraint that masks each step's tokens with it.
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "grammar/grammar.h"
#include "grammar/token_mask.h"
#include "sched/engine_loop.h"
#include "server/answer/text_codec.h"

namespace baton::server {

struct ConstraintSpec {
  enum class Kind { None, JsonObject, JsonSchema, Grammar, Regex, Choice };
  Kind kind = Kind::None;
  nlohmann::ordered_json schema;     // JsonSchema, set by keep_schema_order
  std::string schema_pointer;        // where the schema is in the request body
  std::string text;                  // Grammar (GBNF) / Regex
  std::vector<std::string> choices;  // Choice
  std::string field;                 // the request field, for error messages
  bool active() const { return kind != Kind::None; }
};

// Reads response_format / grammar / regex (and the llama-server and vLLM spellings json_schema,
// guided_json, guided_regex, guided_grammar, guided_choice) from a request body; at most one
// may be given. Throws ApiError(400) naming the field.
ConstraintSpec parse_constraint_fields(const nlohmann::json& body);
// The Responses API's spelling: text.format, {"type": "text" | "json_object" | "json_schema",
// "name", "schema", "strict"} with the schema beside the type. Throws ApiError(400).
ConstraintSpec parse_text_format(const nlohmann::json& body);
// Takes the schema from the body parsed with its key order kept, so that properties are
// generated in the order the client wrote them; every caller of parse_constraint_fields calls
// this with the same body.
void keep_schema_order(ConstraintSpec& spec, const nlohmann::ordered_json& body);

// The GBNF text that a spec stands for. Throws grammar::GrammarError.
std::string constraint_gbnf(const ConstraintSpec& spec);

// Compiles specs (GrammarError → ApiError 400 naming the field) and keeps the most recently used
// grammars, so a client that sends the same schema on every request compiles it once. Builds
// the vocabulary trie on first use. Thread-safe.
class ConstraintCompiler {
 public:
  // The cache keeps at most this many grammars and this many bytes of them (text and compiled
  // form); a grammar over an eighth of the bytes serves its own request and is not kept.
  static constexpr size_t kCachedGrammars = 64;
  static constexpr size_t kCachedGrammarBytes = size_t{128} << 20;

  explicit ConstraintCompiler(const TextCodec& codec) : codec_(codec) {}
  std::shared_ptr<const grammar::Grammar> compile(const ConstraintSpec& spec);
  // Compiles GBNF text built by the server itself (tool-call grammars), cached the same way.
  std::shared_ptr<const grammar::Grammar> compile_gbnf(const std::string& gbnf,
                                                       const std::string& field);
  // markers: control-token texts the grammar may spell with their token (a tool-call format's
  // markup, e.g. "<|python_tag|>"); every other control token stays out of constrained output.
  // max_tokens >= 0: the output is planned to end complete within that many tokens.
  std::shared_ptr<sched::TokenConstraint> make(std::shared_ptr<const grammar::Grammar> g,
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
  const TextCodec& codec_;
  mutable std::mutex mu_;
  std::shared_ptr<const grammar::VocabTrie> vocab_;
  std::vector<std::string> vocab_markers_;
  std::shared_ptr<const grammar::VocabTrie> marker_vocab_;  // for vocab_markers_
  // Most recent first; small, so a linear scan is cheaper than a map and an LRU list.
  std::vector<CachedGrammar> cache_;
  size_t cache_bytes_ = 0;
};

}  // namespace baton::server
