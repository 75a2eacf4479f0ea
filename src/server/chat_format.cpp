#include "server/chat_format.h"

namespace baton::server {

namespace {

std::string chatml_role(const std::string& role) {
  if (role == "developer") return "system";
  return role;
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
      out += "<|im_start|>" + chatml_role(m.role) + "\n" + m.content + "<|im_end|>\n";
    }
    out += "<|im_start|>assistant\n";
    return out;
  }
  for (const auto& m : messages) out += plain_role(m.role) + ": " + m.content + "\n";
  out += "Assistant:";
  return out;
}

}  // namespace baton::server
