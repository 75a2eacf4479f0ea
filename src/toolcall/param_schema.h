#pragma once
// Formats that write each argument as text (<parameter=city>Paris</parameter>) lose the JSON
// type; the tool's JSON schema from the request says how to read the text back.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace baton::toolcall {

enum class ParamKind {
  string,   // "type": "string": the text as it is, streamed as it arrives
  json,     // number, integer, boolean, object, array: the text parsed as JSON if it parses
  unknown,  // not in the schema: objects and arrays parsed, anything else a string
};

class ParamSchemas {
 public:
  explicit ParamSchemas(const nlohmann::ordered_json& tools);
  ParamKind kind(std::string_view tool, std::string_view param) const;

 private:
  std::map<std::string, std::map<std::string, ParamKind, std::less<>>, std::less<>> kinds_;
};

// JSON text of a parameter's complete value `raw` read as `kind`.
std::string param_json(std::string_view raw, ParamKind kind);

}  // namespace baton::toolcall
