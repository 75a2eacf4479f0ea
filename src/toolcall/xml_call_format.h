#pragma once
// One engine for the families that write a call as markup around a function name and its
// parameters, each parameter a key and a text value (Qwen3-Coder's <function=…><parameter=…>,
// GLM's <arg_key>/<arg_value>, MiniMax's <invoke name="…">, ...). A spec says which literals
// the family uses; the engine builds the arguments' JSON from the values, typed by the tools'
// schemas, and streams string values as they are generated.
#include <string>
#include <vector>

#include "toolcall/output_format.h"
#include "toolcall/param_schema.h"

namespace baton::toolcall {

struct XmlCallSpec {
  std::string name;
  // Literals wrapping all the calls of a message (none when each call stands alone).
  std::vector<std::string> section_open, section_close;
  std::vector<std::string> call_open;  // before the function name; whitespace allowed between
  // After the function name. Empty: the name ends before the first '<' or newline.
  std::string name_end;
  std::vector<std::string> param_open;  // before a parameter's key
  std::string key_end;                  // after the key
  std::vector<std::string> value_open;  // after key_end, before the value (may be empty)
  std::string value_end;                // after the value; "{key}" stands for the key
  // One newline after the key and one before value_end belong to the markup, not the value.
  bool trim_newlines = false;
  // A value may be wrapped in <![CDATA[…]]> (MiniCPM does so for values holding '<', '&' or a
  // newline); the wrapper is markup, its inside the value as it is.
  bool cdata = false;
  // Closes the call; pieces after the first may be missing at the end of the text.
  std::vector<std::string> call_close;
  std::vector<std::string> markers;  // special-token texts among the literals
};

class XmlCallFormat : public OutputFormat {
 public:
  XmlCallFormat(XmlCallSpec spec, const FormatContext& ctx);
  std::string_view name() const override { return spec_.name; }
  ParsedOutput parse(std::string_view text, bool final) const override;
  std::vector<std::string> markers() const override { return spec_.markers; }
  std::string call_trigger() const override;
  // Defined in xml_call_grammar.cpp: each parameter's text as the parser reads it back.
  std::string call_grammar(const CallGrammarRequest& req, GrammarSink& sink) const override;

 private:
  XmlCallSpec spec_;
  ParamSchemas schemas_;
};

}  // namespace baton::toolcall
