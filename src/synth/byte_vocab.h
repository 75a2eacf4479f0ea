#pragma once
// The built-in SentencePiece-style ("llama" model) vocabulary of `--byte-vocab`: <unk>, <s>,
// </s>, then one token per byte "<0x00>".."<0xFF>". Every text encodes, as bytes.
#include "gguf/gguf_writer.h"

namespace baton::synth {

inline constexpr int64_t kByteVocabSize = 259;

void write_byte_vocab(gguf::GgufWriter& w);

}  // namespace baton::synth
