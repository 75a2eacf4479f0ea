#include "server/http/request_steps.h"

#include <cstdint>
#include <string>
#include <utility>

namespace baton::server {

void start_request(std::optional<RequestParser>& slot, const HeadLimits& limits) {
  slot.emplace();
  slot->header_limit(static_cast<uint32_t>(limits.max_head_bytes));
  slot->body_limit(limits.max_body_bytes);
}

ApiError framing_error(const boost::beast::error_code& ec, const RequestParser& parser,
                       const HeadLimits& limits) {
  // Beast stores the start line as soon as it is parsed, before the header fields.
  return parse_error(ec, !parser.get().target().empty(), limits);
}

HeadStep on_head_parsed(const RequestParser& parser, const HeadLimits& limits, HttpApp& app) {
  HeadStep step;
  const RequestHead& head = parser.get().base();
  step.version = head.version();
  step.keep_alive = parser.keep_alive();
  if (auto err = check_head(head, limits)) {
    step.refusal = std::move(err);
    return step;
  }
  Dispatch d = app.dispatch(head);
  // A client whose request is refused this early gets no second chance on this connection.
  if (d.early) {
    step.early = std::move(d.early);
  } else {
    step.route = std::move(d);
  }
  return step;
}

HttpRequest take_request(RequestParser& parser) {
  auto msg = parser.release();
  return {std::string(msg.method_string()), std::string(target_path(msg.target())),
          std::move(msg.body()), session_key(msg)};
}

bool keeps_connection(const HttpResponse& res, unsigned version, bool keep_alive) {
  return keep_alive && !(res.async && res.async->streams() && version != 11);
}

}  // namespace baton::server
