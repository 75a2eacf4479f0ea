#pragma once
// The keys that additionalProperties allows: any key of at most a bounded length that does not
// spell a declared property's name (a duplicate key would let the extra value override a
// checked one). Used by json_schema.cpp.
#include <functional>
#include <string>
#include <vector>

namespace baton::grammar::schema_detail {

struct ExtraKeyRules {
  int max_len = 64;      // characters in an extra key
  std::string key_char;  // the rule of one unescaped key character
  std::string hint;      // seeds the names of the rules
  // Adds (or shares) a rule for the body; returns its name.
  std::function<std::string(const std::string& hint, const std::string& body)> rule;
};

// The expression of an extra key after its opening quote, up to and including its closing
// quote. Extra keys are spelled without escapes, so a key that decodes to a property's name can
// only be spelled as that name, which this rules out. Names longer than max_len characters
// cannot collide and cost nothing; the work is bounded by max_len per name, with no recursion.
std::string extra_key_rest(const std::vector<std::string>& avoid, const ExtraKeyRules& r);

}  // namespace baton::grammar::schema_detail
