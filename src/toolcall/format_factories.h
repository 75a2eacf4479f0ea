#pragma once
// The factories of the formats that have a class of their own in their own file; the table of
// every format (format_registry.cpp) names them. The families written as a spec of a shared
// class (xml_families.h, json_args_families.h) have no factory.
#include <memory>

#include "toolcall/output_format.h"

namespace baton::toolcall {

// One factory per family, each in its own file.
std::unique_ptr<OutputFormat> make_hermes_format();
std::unique_ptr<OutputFormat> make_llama3_format();
std::unique_ptr<OutputFormat> make_firefunction_format();
std::unique_ptr<OutputFormat> make_mistral_format();
std::unique_ptr<OutputFormat> make_deepseek_format();
std::unique_ptr<OutputFormat> make_dsml_format();
std::unique_ptr<OutputFormat> make_minimax_m1_format();
std::unique_ptr<OutputFormat> make_apriel_format(const FormatContext& ctx);
std::unique_ptr<OutputFormat> make_apertus_format();
std::unique_ptr<OutputFormat> make_gigachat3_format();
std::unique_ptr<OutputFormat> make_gigachat31_format();

}  // namespace baton::toolcall
