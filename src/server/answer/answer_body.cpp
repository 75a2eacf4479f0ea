#include "server/answer/answer_body.h"

#include <algorithm>
#include <chrono>
#include <mutex>

#include "server/answer/generation.h"
#include "server/server_routes.h"
#include "util/log.h"

namespace baton::server {

namespace {

// One choice while it runs.
struct Running {
  ChoicePlan plan;
  std::shared_ptr<sched::RequestHandle> handle;  // null until submitted
  std::unique_ptr<Generation> gen;
  std::string text;  // everything generated (echo included), for the final parse
  std::vector<TokenLogprob> logprobs;
  bool echoed = false;
  bool ended = false;
  ChoiceResult result;
};

double mean_logprob(const ChoiceResult& r) {
  if (r.logprobs.empty()) return 0;
  double sum = 0;
  for (const auto& lp : r.logprobs) sum += lp.logprob;
  return sum / static_cast<double>(r.logprobs.size());
}

class AnswerBody : public AsyncBody {
 public:
  AnswerBody(AnswerPlan plan, const tokenizer::TextCodec& codec,
             std::unique_ptr<AnswerWriter> writer)
      : codec_(codec), writer_(std::move(writer)), plan_(std::move(plan)) {
    runs_.reserve(plan_.choices.size());
    for (auto& c : plan_.choices) {
      runs_.push_back(Running{std::move(c), nullptr, nullptr, {}, {}, false, false, {}});
    }
    plan_.choices.clear();
    for (auto& r : runs_) {
      if (r.plan.leader) submit(r);  // throws before anything is sent
    }
  }

  ~AnswerBody() override {
    for (auto& r : runs_) {
      if (r.handle) r.handle->set_listener({});
    }
  }

  bool streams() const override { return plan_.stream; }

  void set_wakeup(std::function<void()> wake) override {
    {
      std::lock_guard<std::mutex> lock(wake_mu_);
      wake_ = wake;
    }
    for (auto& r : runs_) {
      if (r.handle) r.handle->set_listener(wake);
    }
  }

  void abandon(const char* why) override {
    if (abandoned_) return;
    abandoned_ = true;
    for (auto& r : runs_) {
      if (!r.handle) continue;
      r.handle->set_listener({});
      if (!r.ended) {
        log::info("req={} cancelled: {}", r.gen->request_id(), why);
        r.gen->cancel();
      }
    }
  }

  bool pull(bool keepalive_due, std::string& out, HttpResponse& res) override {
    if (finished_) return true;
    if (plan_.stream && !started_) {
      out += writer_->stream_start();
      started_ = true;
    }
    advance(out);
    if (failure_) return fail(out, res);
    if (std::all_of(runs_.begin(), runs_.end(), [](const Running& r) { return r.ended; })) {
      return complete(out, res);
    }
    if (plan_.stream && out.empty() && keepalive_due) out += writer_->stream_keepalive();
    return false;
  }

 private:
  void submit(Running& r) {
    r.handle = plan_.submit(r.plan.request);
    r.gen = std::make_unique<Generation>(r.handle, codec_, plan_.logprobs || plan_.keep_best > 0,
                                         static_cast<int32_t>(r.plan.request.prompt.size()));
    std::function<void()> wake;
    {
      std::lock_guard<std::mutex> lock(wake_mu_);
      wake = wake_;
    }
    if (wake) r.handle->set_listener(std::move(wake));
  }

  // Drains every running choice and submits the followers whose leader has prefilled.
  void advance(std::string& out) {
    for (size_t i = 0; i < runs_.size() && !failure_; ++i) {
      Running& r = runs_[i];
      if (!r.handle) {
        if (!leader_ready(i)) continue;
        try {
          submit(r);
        } catch (const ApiError& e) {
          failure_ = e;
          return;
        }
      }
      if (!r.ended) drain(r, out);
    }
  }

  bool leader_ready(size_t i) const {
    for (size_t j = i; j-- > 0;) {
      const Running& l = runs_[j];
      if (l.plan.group == runs_[i].plan.group && l.plan.leader) {
        return l.gen && (l.gen->started() || l.gen->done());
      }
    }
    return true;
  }

  void drain(Running& r, std::string& out) {
    GenerationDelta d;
    if (!r.echoed) {
      d.text = r.plan.echo;
      r.echoed = true;
    }
    bool done = false;
    for (;;) {
      auto p = r.gen->poll(std::chrono::milliseconds(0), d);
      if (p == Generation::Poll::Idle) break;
      if (p == Generation::Poll::Done) {
        done = true;
        break;
      }
    }
    r.text += d.text;
    r.logprobs.insert(r.logprobs.end(), d.logprobs.begin(), d.logprobs.end());
    if (plan_.stream && !d.empty()) {
      toolcall::OutputDelta od = r.plan.parser->push(d.text);
      out +=
          writer_->stream_delta(index_of(r), sent(od), plan_.logprobs ? d.logprobs : no_logprobs_);
    }
    if (done) end(r, out);
  }

  size_t index_of(const Running& r) const { return static_cast<size_t>(&r - runs_.data()); }

  // parallel_tool_calls false: calls after the first are never sent.
  toolcall::OutputDelta sent(toolcall::OutputDelta od) const {
    if (!plan_.single_call) return od;
    std::erase_if(od.calls, [](const toolcall::ToolCallDelta& c) { return c.index > 0; });
    return od;
  }
  toolcall::ParsedOutput sent(toolcall::ParsedOutput msg) const {
    if (plan_.single_call && msg.calls.size() > 1) msg.calls.resize(1);
    return msg;
  }

  void end(Running& r, std::string& out) {
    r.ended = true;
    if (r.gen->failed()) {
      ApiError err(r.gen->error_status(), r.gen->error());
      if (err.status == 503) err.retry_after_s = 1;
      failure_ = err;
      return;
    }
    ChoiceResult& res = r.result;
    res.index = index_of(r);
    res.text = r.text;
    res.engine_reason = r.gen->finish_reason();
    res.stop_sequence = r.gen->stop_sequence();
    res.usage = r.gen->usage();
    res.logprobs = std::move(r.logprobs);
    if (plan_.stream) {
      out += writer_->stream_delta(res.index, sent(r.plan.parser->finish()), no_logprobs_);
      res.msg = sent(r.plan.parser->result());
      out += writer_->stream_choice_end(res);
    } else {
      // One final parse: a call cut short or malformed is content only, never half a call.
      res.msg = sent(r.plan.parser->parse_complete(r.text));
    }
  }

  // Every choice ended: the closing events, or the JSON body.
  bool complete(std::string& out, HttpResponse& res) {
    finished_ = true;
    std::vector<ChoiceResult> all;
    Usage total;
    for (auto& r : runs_) {
      if (r.plan.leader) {
        total.prompt_tokens += r.result.usage.prompt_tokens;
        total.cached_tokens += r.result.usage.cached_tokens;
      }
      total.completion_tokens += r.result.usage.completion_tokens;
      all.push_back(std::move(r.result));
    }
    if (plan_.keep_best > 0) all = best_of(std::move(all));
    if (!plan_.logprobs) {
      for (auto& c : all) c.logprobs.clear();
    }
    if (plan_.stream) {
      out += writer_->stream_end(all, total);
    } else {
      res.status = 200;
      res.body = writer_->answer_json(all, total)
                     .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    return true;
  }

  // Per group, the `keep_best` choices with the highest mean logprob, renumbered in order.
  std::vector<ChoiceResult> best_of(std::vector<ChoiceResult> all) const {
    std::vector<ChoiceResult> kept;
    size_t start = 0;
    while (start < all.size()) {
      size_t end = start;
      while (end < all.size() && runs_[end].plan.group == runs_[start].plan.group) ++end;
      std::stable_sort(all.begin() + static_cast<std::ptrdiff_t>(start),
                       all.begin() + static_cast<std::ptrdiff_t>(end),
                       [](const ChoiceResult& a, const ChoiceResult& b) {
                         return mean_logprob(a) > mean_logprob(b);
                       });
      for (size_t i = start; i < std::min(end, start + plan_.keep_best); ++i) {
        kept.push_back(std::move(all[i]));
        kept.back().index = kept.size() - 1;
      }
      start = end;
    }
    return kept;
  }

  bool fail(std::string& out, HttpResponse& res) {
    finished_ = true;
    abandon("another choice of the same request failed");
    if (plan_.stream) {
      out += writer_->stream_error(*failure_);
    } else {
      send_error(res, *failure_);
      res.body = writer_->error_body_json(*failure_).dump(-1, ' ', false,
                                                          nlohmann::json::error_handler_t::replace);
    }
    return true;
  }

  const tokenizer::TextCodec& codec_;
  std::unique_ptr<AnswerWriter> writer_;
  AnswerPlan plan_;
  std::vector<Running> runs_;
  std::mutex wake_mu_;
  std::function<void()> wake_;
  std::optional<ApiError> failure_;
  const std::vector<TokenLogprob> no_logprobs_;
  bool started_ = false;
  bool finished_ = false;
  bool abandoned_ = false;
};

}  // namespace

std::shared_ptr<AsyncBody> start_answer(AnswerPlan plan, const tokenizer::TextCodec& codec,
                                        std::unique_ptr<AnswerWriter> writer) {
  return std::make_shared<AnswerBody>(std::move(plan), codec, std::move(writer));
}

}  // namespace baton::server
