#include "scripted/vocab.h"

#include <algorithm>
#include <stdexcept>

namespace baton::agents {

AddedToken parse_added_token(const std::string& spec) {
  const auto colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  if (colon == std::string::npos || colon + 1 == spec.size() ||
      (kind != "control" && kind != "user")) {
    throw std::invalid_argument("--add-token wants control:TEXT or user:TEXT, got " + spec);
  }
  return {spec.substr(colon + 1), kind == "control"};
}

tokenizer::VocabSpec load_vocab(const gguf::GgufFile& f, const std::vector<AddedToken>& added,
                                const std::string& eot) {
  using tokenizer::TokenType;
  auto spec = tokenizer::vocab_spec_from_gguf(f);
  if (spec.types.empty())
    spec.types.assign(spec.tokens.size(), static_cast<int32_t>(TokenType::Normal));
  for (const auto& a : added) {
    const auto type = static_cast<int32_t>(a.control ? TokenType::Control : TokenType::UserDefined);
    auto it = std::find(spec.tokens.begin(), spec.tokens.end(), a.text);
    if (it != spec.tokens.end()) {
      spec.types[it - spec.tokens.begin()] = type;
      continue;
    }
    spec.tokens.push_back(a.text);
    spec.types.push_back(type);
    if (!spec.scores.empty()) spec.scores.push_back(0.0f);
  }
  if (!eot.empty()) {
    auto it = std::find(spec.tokens.begin(), spec.tokens.end(), eot);
    if (it == spec.tokens.end()) throw std::runtime_error("--eot " + eot + " is not a token");
    spec.eot_id = static_cast<int32_t>(it - spec.tokens.begin());
  }
  return spec;
}

std::unique_ptr<tokenizer::Tokenizer> reply_tokenizer(tokenizer::VocabSpec spec) {
  spec.add_space_prefix = false;
  return tokenizer::Tokenizer::from_spec(std::move(spec));
}

}  // namespace baton::agents
