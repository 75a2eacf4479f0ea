#include "server/http/sse.h"

namespace baton::server {

std::string sse_data(const nlohmann::json& chunk) {
  // dump() escapes control characters, so the payload never contains a raw newline that would
  // split the event.
  return "data: " + chunk.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n\n";
}

std::string sse_event(std::string_view name, const nlohmann::json& data) {
  std::string out = "event: ";
  out += name;
  out += '\n';
  out += sse_data(data);
  return out;
}

std::string sse_done() {
  return "data: [DONE]\n\n";
}

std::string sse_comment(std::string_view text) {
  std::string line(text);
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return ": " + line + "\n\n";
}

}  // namespace baton::server
