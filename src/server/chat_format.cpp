#include "server/chat_format.h"

namespace baton::server {

namespace {

std::string chatml_role(const std::string& role) {
  if (role == "developer") return "system";
  return role;
}

constexpr const char* kImStart = "<|im_start|>";
constexpr const char* kImEnd = "<|im_end|>";

void append(std::vector<int32_t>& out, const std::vector<int32_t>& more) {
  out.insert(out.end(), more.begin(), more.end());
}

// The text pieces are exactly the stretches between two markers in render_chat's output
// ("role\ncontent", "\n", "assistant\n"), each encoded on its own. Special-token parsing
// splits the rendered string at the same places, and a tokenizer treats each stretch between
// special tokens as a separate segment (SentencePiece puts its dummy-prefix space at the start
// of every one, byte-level BPE pre-tokenizes each alone), so the tokens come out the same as
// before. Splitting role from content instead would add a SentencePiece space in front of the
// content and could change BPE merges across the "\n".
std::vector<int32_t> encode_chatml(const std::vector<ChatMessage>& messages,
                                   const TextCodec& codec) {
  const auto marker = [&](const char* text) { return codec.encode(text, false, true); };
  const auto text = [&](const std::string& t) { return codec.encode(t, false, false); };
  const std::vector<int32_t> im_start = marker(kImStart), im_end = marker(kImEnd);
  std::vector<int32_t> out = codec.encode("", codec.default_add_bos(), false);
  const std::vector<int32_t> newline = text("\n");
  for (const auto& m : messages) {
    append(out, im_start);
    append(out, text(chatml_role(m.role) + "\n" + m.content));
    append(out, im_end);
    append(out, newline);
  }
  append(out, im_start);
  append(out, text("assistant\n"));
  return out;
}

std::string plain_role(const std::string& role) {
  if (role == "system" || role == "developer") return "System";
  if (role == "assistant") return "Assistant";
  return "User";
}

}  // namespace

std::string render_chat(const std::vector<ChatMessage>& messages, ChatStyle style) {
  std::string out;
  if (style == ChatStyle::ChatML) {
    for (const auto& m : messages) {
      out += kImStart + chatml_role(m.role) + "\n" + m.content + kImEnd + "\n";
    }
    out += kImStart + std::string("assistant\n");
    return out;
  }
  for (const auto& m : messages) out += plain_role(m.role) + ": " + m.content + "\n";
  out += "Assistant:";
  return out;
}

std::vector<int32_t> encode_chat(const std::vector<ChatMessage>& messages, ChatStyle style,
                                 const TextCodec& codec) {
  if (style == ChatStyle::ChatML) return encode_chatml(messages, codec);
  // The plain transcript has no markers: the whole of it is ordinary text.
  return codec.encode(render_chat(messages, style), codec.default_add_bos(), false);
}

}  // namespace baton::server
