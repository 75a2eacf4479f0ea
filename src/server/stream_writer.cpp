#include "server/stream_writer.h"

#include <chrono>

#include "server/conn_server.h"
#include "server/sse.h"
#include "util/log.h"

namespace baton::server {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

constexpr auto kPollSlice = std::chrono::milliseconds(20);

class StreamState {
 public:
  StreamState(std::unique_ptr<Generation> gen, StreamJob job)
      : gen_(std::move(gen)), job_(std::move(job)), last_write_(Clock::now()) {}

  // One provider call: wait a slice for progress and write what there is. false = give up.
  bool step(httplib::DataSink& sink) {
    if (ended_) return true;
    if (job_.chat && !sent_role_) {
      if (!write(sink, sse_data(chat_chunk_json(job_.meta, {{"role", "assistant"}, {"content", ""}},
                                                "", nullptr)))) {
        return client_gone("write failed");
      }
      sent_role_ = true;
    }
    GenerationDelta d;
    auto p = gen_->poll(kPollSlice, d);
    if (!d.empty() && !write(sink, sse_data(content_chunk(d)))) return client_gone("write failed");
    if (p == Generation::Poll::Done) return finish(sink);
    auto now = Clock::now();
    if (now - last_check_ >= kPollSlice) {
      last_check_ = now;
      if (peer_closed(current_socket())) return client_gone("client closed the connection");
    }
    if (now - last_write_ >= std::chrono::duration<double>(job_.keepalive_s) &&
        !write(sink, sse_comment("keepalive"))) {
      return client_gone("write failed");
    }
    return true;
  }

  void release() {
    if (!gen_->done()) gen_->cancel();
  }

 private:
  bool write(httplib::DataSink& sink, const std::string& s) {
    last_write_ = Clock::now();
    return sink.write(s.data(), s.size());
  }

  bool client_gone(const char* why) {
    log::info("req={} stream cancelled: {}", gen_->request_id(), why);
    gen_->cancel();
    ended_ = true;
    return false;
  }

  json content_chunk(const GenerationDelta& d) {
    json lp = nullptr;
    if (job_.logprobs && !d.logprobs.empty()) {
      lp = job_.chat ? chat_logprobs_json(d.logprobs)
                     : completion_logprobs_json(d.logprobs, text_offset_);
    }
    text_offset_ += d.text.size();
    if (job_.chat) return chat_chunk_json(job_.meta, {{"content", d.text}}, "", lp);
    return text_chunk_json(job_.meta, d.text, "", lp);
  }

  bool finish(httplib::DataSink& sink) {
    ended_ = true;
    bool ok = true;
    if (gen_->failed()) {
      json err = {{"error",
                   {{"message", gen_->error()},
                    {"type", gen_->error_status() >= 500 && gen_->error_status() != 503
                                 ? "server_error"
                                 : "overloaded_error"},
                    {"param", nullptr},
                    {"code", nullptr}}}};
      ok = write(sink, sse_data(err));
    } else {
      json last = job_.chat
                      ? chat_chunk_json(job_.meta, json::object(), gen_->finish_reason(), nullptr)
                      : text_chunk_json(job_.meta, "", gen_->finish_reason(), nullptr);
      ok = write(sink, sse_data(last));
      if (ok && job_.include_usage) {
        ok = write(sink, sse_data(usage_chunk_json(job_.meta, job_.chat, gen_->usage())));
      }
    }
    if (ok) ok = write(sink, sse_done());
    if (ok) sink.done();
    return ok;
  }

  std::unique_ptr<Generation> gen_;
  StreamJob job_;
  bool sent_role_ = false;
  bool ended_ = false;
  size_t text_offset_ = 0;
  Clock::time_point last_write_;
  Clock::time_point last_check_{};
};

}  // namespace

void start_stream(httplib::Response& res, std::unique_ptr<Generation> gen, StreamJob job) {
  auto state = std::make_shared<StreamState>(std::move(gen), std::move(job));
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  res.set_chunked_content_provider(
      "text/event-stream", [state](size_t, httplib::DataSink& sink) { return state->step(sink); },
      [state](bool) { state->release(); });
}

}  // namespace baton::server
