#include "server/http/request_pipeline.h"

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <cstdint>
#include <optional>
#include <utility>

#include "server/http/request_steps.h"

namespace baton::server {

namespace beast = boost::beast;
namespace http = beast::http;

namespace {

enum class Until { Header, Message };

// Feeds the parser the way Connection's async_read_header / async_read do: everything that is
// buffered, then what the socket does next. Returns need_more when the bytes ran out and the
// client waits, end_of_stream when it closed before a first byte, else the parser's own error
// (with `eof`, a partial message is the parser's partial_message, as Beast's read reports it).
beast::error_code feed(RequestParser& p, std::string_view& in, Until until, bool eof) {
  auto reached = [&] { return until == Until::Header ? p.is_header_done() : p.is_done(); };
  while (!reached()) {
    beast::error_code ec;
    if (!in.empty()) {
      size_t used = p.put(boost::asio::const_buffer(in.data(), in.size()), ec);
      in.remove_prefix(used);
      if (ec && ec != http::error::need_more) return ec;
      if (used > 0) continue;
    }
    if (!eof) return http::error::need_more;
    if (!p.got_some()) return http::error::end_of_stream;
    p.put_eof(ec);
    return ec;
  }
  return {};
}

// One connection's state across its requests, as Connection keeps it.
class Run {
 public:
  Run(const HeadLimits& limits, HttpApp& app, bool eof) : limits_(limits), app_(app), eof_(eof) {}

  // Serves the next request in `in`; false when the connection is done (closed or waiting).
  bool next(std::string_view& in) {
    if (in.empty()) return false;  // idle keep-alive: the idle deadline closes it quietly
    std::optional<RequestParser> p;
    start_request(p, limits_);
    auto ec = feed(*p, in, Until::Header, eof_);
    if (ec == http::error::need_more) return waiting();
    if (ec == http::error::end_of_stream) return false;
    if (ec) return fail(framing_error(ec, *p, limits_));
    HeadStep step = on_head_parsed(*p, limits_, app_);
    if (step.refusal) return fail(*step.refusal);
    if (step.early) return respond(std::move(*step.early), false);
    if (!p->is_done()) {
      ec = feed(*p, in, Until::Message, eof_);
      if (ec == http::error::need_more) return waiting();
      if (ec) return fail(framing_error(ec, *p, limits_));
    }
    HttpResponse res = step.route->handle(take_request(*p));
    const bool keep_alive = keeps_connection(res, step.version, step.keep_alive);
    return respond(std::move(res), keep_alive);
  }

  PipelineResult result;

 private:
  bool waiting() {
    result.incomplete = true;
    return false;
  }

  bool fail(const ApiError& e) { return respond(app_.error_response(e), false); }

  bool respond(HttpResponse res, bool keep_alive) {
    PipelineResponse r;
    r.async = res.async != nullptr;
    if (res.async) {
      // A stream's 200 head goes out at once; a deferred answer's status is not known yet.
      r.status = res.async->streams() ? 200 : 0;
      res.async->abandon("request pipeline: no engine runs here");
    } else {
      r.status = res.status;
      r.content_type = std::move(res.content_type);
      r.body = std::move(res.body);
    }
    if (r.status != 0) app_.on_response(r.status);
    r.closes = !keep_alive;
    result.responses.push_back(std::move(r));
    return keep_alive;
  }

  const HeadLimits& limits_;
  HttpApp& app_;
  bool eof_;
};

}  // namespace

PipelineResult run_request_pipeline(std::string_view bytes, const HeadLimits& limits, HttpApp& app,
                                    bool eof) {
  Run run(limits, app, eof);
  while (run.next(bytes)) {
  }
  return std::move(run.result);
}

}  // namespace baton::server
