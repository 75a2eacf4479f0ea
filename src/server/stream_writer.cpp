#include "server/stream_writer.h"

#include <chrono>

#include "server/errors.h"
#include "server/server_routes.h"
#include "server/sse.h"
#include "util/log.h"

namespace baton::server {

using nlohmann::json;

namespace {

// Shared by both bodies: the listener hook, draining what the request has produced, abandon.
class GenerationBody : public AsyncBody {
 public:
  GenerationBody(std::shared_ptr<sched::RequestHandle> handle, std::unique_ptr<Generation> gen,
                 StreamJob job)
      : handle_(std::move(handle)), gen_(std::move(gen)), job_(std::move(job)) {}
  ~GenerationBody() override { handle_->set_listener({}); }

  void set_wakeup(std::function<void()> wake) override { handle_->set_listener(std::move(wake)); }

  void abandon(const char* why) override {
    handle_->set_listener({});
    if (gen_->done() || abandoned_) return;
    abandoned_ = true;
    log::info("req={} cancelled: {}", gen_->request_id(), why);
    gen_->cancel();
  }

 protected:
  // The error a failed, cancelled or shut-down request ends with (500 or 503).
  ApiError generation_error() const {
    ApiError err(gen_->error_status(), gen_->error());
    if (gen_->error_status() == 503) err.retry_after_s = 1;
    return err;
  }

  // The parsed answer as sent (parallel_tool_calls false keeps the first call).
  toolcall::ParsedOutput as_sent(toolcall::ParsedOutput msg) const {
    if (job_.single_call && msg.calls.size() > 1) msg.calls.resize(1);
    return msg;
  }

  // Everything available now, without waiting.
  bool drain(GenerationDelta& d) {
    for (;;) {
      auto p = gen_->poll(std::chrono::milliseconds(0), d);
      if (p == Generation::Poll::Done) return true;
      if (p == Generation::Poll::Idle) return false;
    }
  }

  std::shared_ptr<sched::RequestHandle> handle_;
  std::unique_ptr<Generation> gen_;
  StreamJob job_;
  bool abandoned_ = false;
};

class SseBody : public GenerationBody {
 public:
  using GenerationBody::GenerationBody;
  bool streams() const override { return true; }

  bool pull(bool keepalive_due, std::string& out, HttpResponse&) override {
    if (ended_) return true;
    if (job_.chat && !sent_role_) {
      out += sse_data(
          chat_chunk_json(job_.meta, {{"role", "assistant"}, {"content", ""}}, "", nullptr));
      sent_role_ = true;
    }
    GenerationDelta d;
    bool done = drain(d);
    if (!d.empty()) out += job_.chat ? chat_chunks(d) : sse_data(text_chunk(d));
    if (done) {
      finish(out);
      return true;
    }
    if (out.empty() && keepalive_due) out += sse_comment("keepalive");
    return false;
  }

 private:
  json text_chunk(const GenerationDelta& d) {
    json lp = nullptr;
    if (job_.logprobs && !d.logprobs.empty()) {
      lp = completion_logprobs_json(d.logprobs, text_offset_);
    }
    text_offset_ += d.text.size();
    return text_chunk_json(job_.meta, d.text, "", lp);
  }

  // The parser's view of the new text, one chunk per kind of delta; logprobs ride on the first
  // (or on an empty content chunk while the parser holds the text back).
  std::string chat_chunks(const GenerationDelta& d) {
    json lp = job_.logprobs && !d.logprobs.empty() ? chat_logprobs_json(d.logprobs) : json();
    return chat_delta_events(job_.parser->push(d.text), lp);
  }

  std::string chat_delta_events(const toolcall::OutputDelta& od, json lp) {
    std::string out;
    auto emit = [&](json delta) {
      out += sse_data(chat_chunk_json(job_.meta, delta, "", lp));
      lp = nullptr;
    };
    if (!od.reasoning.empty()) emit({{"reasoning_content", od.reasoning}});
    if (!od.content.empty()) emit({{"content", od.content}});
    for (const auto& call : od.calls) {
      if (job_.single_call && call.index > 0) continue;
      emit({{"tool_calls", json::array({tool_call_delta(call)})}});
    }
    if (!lp.is_null()) emit({{"content", ""}});
    return out;
  }

  void finish(std::string& out) {
    ended_ = true;
    if (gen_->failed()) {
      out += sse_data(error_json(generation_error()));
    } else {
      std::string reason = gen_->finish_reason();
      if (job_.chat) {
        out += chat_delta_events(job_.parser->finish(), nullptr);
        reason = chat_finish_reason(reason, as_sent(job_.parser->result()));
      }
      out += sse_data(job_.chat ? chat_chunk_json(job_.meta, json::object(), reason, nullptr)
                                : text_chunk_json(job_.meta, "", reason, nullptr));
      if (job_.include_usage)
        out += sse_data(usage_chunk_json(job_.meta, job_.chat, gen_->usage()));
    }
    out += sse_done();
  }

  bool sent_role_ = false;
  bool ended_ = false;
  size_t text_offset_ = 0;
};

class JsonBody : public GenerationBody {
 public:
  using GenerationBody::GenerationBody;
  bool streams() const override { return false; }

  bool pull(bool, std::string&, HttpResponse& res) override {
    GenerationDelta d;
    bool done = drain(d);
    text_ += d.text;
    lps_.insert(lps_.end(), d.logprobs.begin(), d.logprobs.end());
    if (!done) return false;
    if (gen_->failed()) {
      send_error(res, generation_error());
      return true;
    }
    bool lp = job_.logprobs;
    json body;
    if (job_.chat) {
      // One final parse: a call cut short or malformed is content only, never half a call.
      const toolcall::ParsedOutput msg = as_sent(job_.parser->parse_complete(text_));
      body = chat_response_json(job_.meta, chat_message_json(msg),
                                chat_finish_reason(gen_->finish_reason(), msg), gen_->usage(),
                                lp ? chat_logprobs_json(lps_) : json());
    } else {
      body = text_response_json(job_.meta, text_, gen_->finish_reason(), gen_->usage(),
                                lp ? completion_logprobs_json(lps_, 0) : json());
    }
    res.status = 200;
    res.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
    return true;
  }

 private:
  std::string text_;
  std::vector<TokenLogprob> lps_;
};

}  // namespace

std::shared_ptr<AsyncBody> make_sse_body(std::shared_ptr<sched::RequestHandle> handle,
                                         std::unique_ptr<Generation> gen, StreamJob job) {
  return std::make_shared<SseBody>(std::move(handle), std::move(gen), std::move(job));
}

std::shared_ptr<AsyncBody> make_json_body(std::shared_ptr<sched::RequestHandle> handle,
                                          std::unique_ptr<Generation> gen, StreamJob job) {
  return std::make_shared<JsonBody>(std::move(handle), std::move(gen), std::move(job));
}

}  // namespace baton::server
