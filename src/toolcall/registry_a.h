#pragma once
// The first half of the format registry: the families whose calls carry JSON arguments
// (Hermes, Llama 3, Firefunction, Mistral, DeepSeek, and the JSON-section families: MiniMax-M1,
// Apriel, Apertus, GigaChat). format_registry.cpp joins both halves.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "toolcall/output_format.h"

namespace baton::toolcall {

std::unique_ptr<OutputFormat> make_format_a(std::string_view name, const FormatContext& ctx);
std::vector<std::string> format_names_a();
// "" when the template is not one of these families.
std::string detect_format_a(std::string_view template_source);

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
