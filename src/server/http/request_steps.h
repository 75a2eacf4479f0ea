#pragma once
// The steps a request takes between the bytes and the route handler, written once: the
// connection (http_connection.cpp) runs them with sockets and deadlines around them, and the
// request pipeline (request_pipeline.h) runs them on bytes in memory for the fuzzer and the
// corpus test, so those test the server's own order of steps rather than a copy of it.
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <optional>

#include "server/http/http_transport.h"

namespace baton::server {

using RequestParser = boost::beast::http::request_parser<boost::beast::http::string_body>;

// A fresh parser with the server's head and body limits, in `slot`.
void start_request(std::optional<RequestParser>& slot, const HeadLimits& limits);

// The answer to a parser error while the head or body was read.
ApiError framing_error(const boost::beast::error_code& ec, const RequestParser& parser,
                       const HeadLimits& limits);

// What a complete head leads to. Exactly one of `refusal`, `early` and `route` is set.
struct HeadStep {
  unsigned version = 11;
  bool keep_alive = true;
  std::optional<ApiError> refusal;    // the head must not be served: answer it, then close
  std::optional<HttpResponse> early;  // the route answered on the head: body unread, then close
  std::optional<Dispatch> route;      // read the body (unless the parser is done), then handle
};
HeadStep on_head_parsed(const RequestParser& parser, const HeadLimits& limits, HttpApp& app);

// The parsed request, for the route's handler; the parser is spent.
HttpRequest take_request(RequestParser& parser);

// Whether the connection may serve another request after `res`: HTTP/1.0 has no chunked
// coding, so a stream there ends by closing the connection.
bool keeps_connection(const HttpResponse& res, unsigned version, bool keep_alive);

}  // namespace baton::server
