#pragma once
// Schema algebra that json_schema.cpp needs before it can write a grammar: which keywords are
// annotations, which JSON types a schema allows, allOf merging, oneOf disjointness, and what a
// $ref points at.
#include <nlohmann/json.hpp>
#include <set>
#include <string>

namespace baton::grammar::schema_detail {

using ojson = nlohmann::ordered_json;

// Keywords that describe and never constrain: ignored wherever they appear.
bool is_annotation(const std::string& key);

// The JSON types ("null", "boolean", "object", "array", "string", "integer", "number") that the
// schema's `type` (or, without one, its type-specific keywords) allows; all of them when
// nothing says. OpenAPI's `nullable: true` adds "null".
std::set<std::string> schema_types(const ojson& schema);

// Whether value has one of the types.
bool has_type(const ojson& value, const std::set<std::string>& types);

// One schema that a value validates against exactly when it validates against both (allOf).
// Throws GrammarError naming the keyword when the two cannot be merged.
// `a` is taken by value: a caller that is done with it moves it in.
ojson merge_schemas(ojson a, const ojson& b, const std::string& where);

// A key for a $ref's sibling keywords (the schema's keywords other than $ref and annotations)
// that does not depend on their order; "" when there are none.
std::string siblings_key(const ojson& s);

// The JSON pointer that a "#..." reference stands for. Throws GrammarError for references out
// of the document.
std::string ref_pointer(const std::string& ref, const std::string& where);

// Whether no value can validate against both alternatives (so oneOf may be treated as anyOf).
// Conservative: false when unsure.
bool disjoint(const ojson& a, const ojson& b);

}  // namespace baton::grammar::schema_detail
