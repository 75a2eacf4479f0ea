#include "bench/response_reader.h"

#include <boost/beast/http.hpp>
#include <functional>
#include <limits>

namespace baton::bench {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;

// Counts a marker in a byte stream that arrives in pieces. Markers start with '\n' (SSE lines
// begin a line), and the stream is taken to begin after a newline.
class MarkerCounter {
 public:
  explicit MarkerCounter(std::string marker) : marker_(std::move(marker)), carry_("\n") {}

  void scan(std::string_view piece) {
    std::string text = carry_;
    text.append(piece);
    // The carry is shorter than the marker, so every match found here includes new bytes and
    // was not counted before.
    for (auto at = text.find(marker_); at != std::string::npos; at = text.find(marker_, at + 1)) {
      ++count_;
    }
    std::size_t keep = std::min(text.size(), marker_.size() - 1);
    carry_ = text.substr(text.size() - keep);
  }
  long count() const { return count_; }

 private:
  std::string marker_, carry_;
  long count_ = 0;
};

}  // namespace

struct ResponseReader::Impl {
  http::response_parser<http::string_body> parser;
  std::string pending;      // bytes the parser has not taken yet (an incomplete head)
  std::size_t scanned = 0;  // bytes of a stored (non-chunked) body already scanned
  MarkerCounter done{"\ndata: [DONE]"}, keepalive{"\n: keepalive"};
  std::string error;
  // Chunked bodies go to the counters only; the parser does not store them.
  std::function<std::size_t(std::uint64_t, beast::string_view, beast::error_code&)> on_chunk =
      [this](std::uint64_t, beast::string_view body, beast::error_code&) {
        scan({body.data(), body.size()});
        return body.size();
      };

  Impl() {
    parser.eager(true);
    parser.body_limit(std::numeric_limits<std::uint64_t>::max());
    parser.on_chunk_body(on_chunk);  // the parser keeps a reference to it
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  void scan(std::string_view piece) {
    done.scan(piece);
    keepalive.scan(piece);
  }

  // A body delimited by Content-Length or by the close is stored; scan what is new of it.
  void scan_stored_body() {
    const std::string& body = parser.get().body();
    if (body.size() > scanned) scan(std::string_view(body).substr(scanned));
    scanned = body.size();
  }
};

ResponseReader::ResponseReader() : impl_(std::make_unique<Impl>()) {}
ResponseReader::~ResponseReader() = default;
ResponseReader::ResponseReader(ResponseReader&&) noexcept = default;
ResponseReader& ResponseReader::operator=(ResponseReader&&) noexcept = default;

bool ResponseReader::feed(std::string_view bytes) {
  auto& p = impl_->parser;
  if (!impl_->error.empty()) return false;
  if (p.is_done()) return true;  // bytes after the response (none are expected) are ignored
  impl_->pending.append(bytes);
  while (!impl_->pending.empty() && !p.is_done()) {
    beast::error_code ec;
    std::size_t used = p.put(boost::asio::buffer(impl_->pending), ec);
    impl_->pending.erase(0, used);
    if (ec == http::error::need_more) break;
    if (ec) {
      impl_->error = "unparseable HTTP response: " + ec.message();
      return false;
    }
    if (used == 0) break;
  }
  impl_->scan_stored_body();
  return true;
}

void ResponseReader::eof() {
  auto& p = impl_->parser;
  if (p.is_done() || !p.got_some() || !impl_->error.empty()) return;
  beast::error_code ec;
  p.put_eof(ec);
  if (ec) impl_->error = "the connection closed mid-response";
  impl_->scan_stored_body();
}

int ResponseReader::status() const {
  return impl_->parser.is_header_done() ? impl_->parser.get().result_int() : 0;
}
bool ResponseReader::complete() const {
  return impl_->parser.is_done();
}
long ResponseReader::done_events() const {
  return impl_->done.count();
}
long ResponseReader::keepalives() const {
  return impl_->keepalive.count();
}
const std::string& ResponseReader::error() const {
  return impl_->error;
}

}  // namespace baton::bench
