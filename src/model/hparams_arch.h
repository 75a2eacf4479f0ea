#pragma once
// The keys of architectures that extend the llama layout (gemma3, mistral3), read after the
// common ones; used by read_hparams only.
#include <cstdint>
#include <string>

#include "gguf/gguf_file.h"
#include "model/hparams.h"

namespace baton::model {

// The sliding window and the layers it applies to (see hparams.cpp). `a` is "<arch>.".
void read_window(const gguf::GgufFile& f, const std::string& a, HParams& h, int64_t default_period,
                 bool required);

// Gemma 3: windowed layers in a period of 6 with their own rope base, q/k norms, sandwich
// norms, GELU FFN, scaled embeddings, the query scale of its size, optional logit softcap.
void read_gemma3(const gguf::GgufFile& f, const std::string& a, HParams& h);

// Mistral 3 (Ministral 3, Devstral Small 2): a llama with YaRN keys of its own and the
// Llama-4-style attention temperature.
void read_mistral3(const gguf::GgufFile& f, const std::string& a, HParams& h);

}  // namespace baton::model
