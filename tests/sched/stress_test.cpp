// Threaded stress on parking: client threads submit requests of random sizes, cancel them at
// random moments, stop reading (the channel fills and the request pauses) and hang up, against a
// LoopCore stepped by its own thread with a KV pool small enough that requests are parked both
// under KV pressure and for prefill preemption. After every step the loop thread checks that
// blocks are conserved and that every decoding request whose client is reading got its decode
// row; at the end every request has ended with the tokens it would have got alone. The same
// clients run again with the KV disk tier on, its loads and saves delayed at random (seeded):
// prefixes spill to it and come back while others decode, and no decoder waits for it.
#include <gtest/gtest.h>

#include <atomic>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "support/fake_engine.h"
#include "kv/disk_hooks.h"
#include "kv/disk_test_util.h"
#include "sched/driver.h"
#include "sched/harness.h"
#include "sched/loop_core.h"
#include "util/log.h"

namespace baton::sched {
namespace {

using namespace std::chrono_literals;

constexpr int kClients = 6;
constexpr int kRounds = 20;       // requests per client
constexpr int32_t kCapacity = 4;  // channel: a client that stops reading fills it in 4 steps
constexpr int32_t kVocab = 64;

engine::FakeEngineConfig engine_config() {
  engine::FakeEngineConfig e;
  e.n_vocab = kVocab;
  e.block_size = 16;
  e.kv_bytes_per_block = 1 << 16;  // 16 blocks per MiB
  e.sleep_us_per_step = 100;       // lets the clients act between steps
  return e;
}

SchedConfig sched_config() {
  SchedConfig c;
  c.parallel = 3;
  c.ctx = 1024;
  c.kv_ram_mb = 2;  // 32 blocks (512 positions) for three requests of up to 400 each
  c.prefill_chunk = 32;
  c.mixed_prefill_chunk = 16;
  c.channel_capacity = kCapacity;
  // Ends the requests whose client hung up without cancelling; far above the clients' pauses.
  c.send_stall_timeout_ms = 1500;
  c.preempt_min_tokens = 16;
  c.preempt_max_wait_s = 0.05;  // parked requests also force their way back (max_wait)
  c.park_ram_mb = 1;            // up to 16 blocks stay pinned; beyond that they are released
  return c;
}

// What a client does with one request.
enum class Action { ReadAll, Cancel, CancelAndDrop, Drop, StallThenRead };

// Shared between a client and the loop thread's checks.
struct Track {
  std::atomic<int64_t> read{0};  // token events the client took from the channel
  std::atomic<bool> cancelled{false};
  std::atomic<bool> dropped{false};  // handle released: nobody reads any more
};

struct Registry {
  std::mutex mu;
  std::map<uint64_t, std::shared_ptr<Track>> tracks;
  std::vector<std::weak_ptr<RequestHandle>> dropped;  // expire once the loop lets them go
  std::shared_ptr<Track> find(uint64_t id) {
    std::lock_guard<std::mutex> lock(mu);
    auto it = tracks.find(id);
    return it == tracks.end() ? nullptr : it->second;
  }
};

// The loop thread: steps the core like EngineLoop does and checks every step.
class Checker {
 public:
  Checker(LoopCore& core, engine::FakeEngine& eng, Registry& reg) : core_(core), reg_(reg) {
    eng.set_on_step([this](const engine::StepBatch& b) {
      for (const auto& c : b.seqs) {
        rows_.push_back(c.request_id);
        if (c.want_logits) token_rows_.push_back(c.request_id);
      }
    });
  }
  void run(const std::atomic<bool>& stop) {
    while (!stop.load()) {
      std::map<uint64_t, int64_t> read_before;
      for (const auto& [id, st] : prev_) {
        if (st.state == RequestState::Decoding) read_before[id] = read_of(id);
      }
      rows_.clear();
      token_rows_.clear();
      bool worked = false;
      try {
        worked = core_.step();
      } catch (const std::exception& e) {
        fail(std::string("step threw: ") + e.what());
      }
      ++steps_;
      if (const std::string e = testing::check_blocks(core_); !e.empty()) fail(e);
      auto now = snapshot();
      check_rows(read_before, now);
      count_loading(now);
      check_token_rows();
      prev_ = std::move(now);
      if (!worked) core_.wait_for_work(2ms);
    }
  }
  std::string error() const { return error_; }
  int64_t steps() const { return steps_; }
  int64_t pauses_seen() const { return pauses_; }
  size_t prefill_preemptions_seen() const { return preempted_.size(); }
  int64_t loading_while_decoding() const { return loading_while_decoding_; }

 private:
  int64_t read_of(uint64_t id) {
    auto t = reg_.find(id);
    return t ? t->read.load() : 0;  // not registered yet: its client has read nothing
  }
  // The metric counts max_wait parks too: prefill preemptions proper are told apart here.
  std::map<uint64_t, RequestStatus> snapshot() {
    std::map<uint64_t, RequestStatus> m;
    for (const auto& r : core_.status().requests) {
      m[r.id] = r;
      if (r.state == RequestState::Parked && r.parked_why == "prefill_preempt") {
        preempted_.insert({r.id, r.parks});
      }
    }
    return m;
  }
  void fail(const std::string& what) {
    if (error_.empty()) error_ = "step " + std::to_string(steps_) + ": " + what;
  }
  // Steps in which decode rows ran while a request that was loading before the step still is.
  void count_loading(const std::map<uint64_t, RequestStatus>& now) {
    bool loading = false, decoded = false;
    for (const auto& [id, st] : now) {
      auto before = prev_.find(id);
      loading = loading || (st.state == RequestState::Loading && before != prev_.end() &&
                            before->second.state == RequestState::Loading);
    }
    for (const auto& [id, st] : prev_) {
      decoded = decoded || (st.state == RequestState::Decoding &&
                            std::find(rows_.begin(), rows_.end(), id) != rows_.end());
    }
    loading_while_decoding_ += loading && decoded;
  }
  // A row that samples a token for a request whose channel was full when the step began (the
  // client had stopped reading) could not deliver it: such a request must wait, paused. A
  // client counts an event after taking it from the channel, so one taken event may not be
  // counted yet (its reader is one thread): only one more than the capacity proves it full.
  void check_token_rows() {
    for (uint64_t id : token_rows_) {
      auto it = prev_.find(id);
      if (it == prev_.end() || it->second.generated == 0) continue;
      if (it->second.generated - read_of(id) >= kCapacity + 1) {
        fail("request " + std::to_string(id) + " (" + state_name(it->second.state) +
             ") was given a token row while its channel was full");
      }
    }
  }
  // A request decoding before the step may miss its row only when its channel was full when
  // the step began (paused), or it was parked or ended by its client during the step. The
  // client's read count is sampled before and after: reads only grow, so these bounds are
  // exact whatever the client did meanwhile.
  void check_rows(const std::map<uint64_t, int64_t>& read_before,
                  const std::map<uint64_t, RequestStatus>& now) {
    for (const auto& [id, before] : read_before) {
      const int64_t pushed = prev_.at(id).generated;
      const bool row = std::find(rows_.begin(), rows_.end(), id) != rows_.end();
      const bool surely_full = pushed - read_of(id) >= kCapacity;
      const bool maybe_full = pushed - before >= kCapacity;
      const std::string who = "request " + std::to_string(id);
      if (row) continue;
      if (surely_full) ++pauses_;
      auto it = now.find(id);
      if (it == now.end()) {
        auto t = reg_.find(id);
        if (!t || !(t->cancelled.load() || t->dropped.load())) {
          fail(who + " ended without a row and without a cancel");
        }
      } else if (it->second.state == RequestState::Decoding && !maybe_full) {
        fail(who + " is decoding and reading but got no decode row");
      }
    }
  }

  LoopCore& core_;
  Registry& reg_;
  std::vector<uint64_t> rows_;        // request ids in this step's batch (set inside forward)
  std::vector<uint64_t> token_rows_;  // those of them whose row samples a token
  std::map<uint64_t, RequestStatus> prev_;
  int64_t steps_ = 0;
  int64_t pauses_ = 0;
  int64_t loading_while_decoding_ = 0;
  std::set<std::pair<uint64_t, int32_t>> preempted_;  // (request, park number)
  std::string error_;
};

struct Plan {
  GenerateRequest req;
  Action action = Action::ReadAll;
  int32_t after_tokens = 0;  // tokens read before the action
  int32_t wait_us = 0;       // a cancel with after_tokens == 0 waits this long instead
  int32_t pause_ms = 0;      // StallThenRead
};

Plan make_plan(std::mt19937& rng, const std::vector<std::vector<int32_t>>& prefixes) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Plan p;
  std::vector<int32_t> prompt;
  if (pick(0, 1)) prompt = prefixes[pick(0, 2)];
  auto tail = testing::make_prompt(pick(1, 220), pick(0, 9999), kVocab);
  prompt.insert(prompt.end(), tail.begin(), tail.end());
  p.req = testing::greedy(prompt, pick(1, 100), /*ignore_eos=*/pick(0, 2) != 0);
  if (pick(0, 5) == 0) {  // sampled: its PRNG must survive parks (checked by length only)
    p.req.sampling.temperature = 1.0f;
    p.req.sampling.seed = static_cast<uint64_t>(pick(1, 1000));
    p.req.ignore_eos = true;
  }
  const int a = pick(0, 99);
  p.action = a < 40   ? Action::ReadAll
             : a < 60 ? Action::Cancel
             : a < 70 ? Action::CancelAndDrop
             : a < 73 ? Action::Drop
                      : Action::StallThenRead;
  p.after_tokens = pick(0, p.req.max_tokens);
  p.wait_us = pick(0, 3000);
  p.pause_ms = pick(1, 80);
  return p;
}

// Reads one token event (or the end) into `o`; false on timeout.
bool read_one(RequestHandle& h, testing::Outcome& o, Track& t, std::chrono::milliseconds limit) {
  Event e;
  if (!h.next(e, limit)) return false;
  if (e.kind == Event::Kind::Token) {
    o.tokens.push_back(e.token.token);
    t.read.fetch_add(1);
  } else {
    o.finished = true;
    o.final = e;
  }
  return true;
}

struct ClientResult {
  int requests = 0;
  std::vector<std::string> errors;
};

void check_outcome(const Plan& p, const testing::Outcome& o, const engine::FakeEngine& eng,
                   ClientResult& res) {
  const auto& req = p.req;
  const bool cancelled = p.action == Action::Cancel;
  const std::string who = "request with prompt " + std::to_string(req.prompt.size()) +
                          " max_tokens " + std::to_string(req.max_tokens);
  const FinishReason why = o.final.reason;
  const bool done = why == FinishReason::Stop || why == FinishReason::Length;
  if (!done && !(cancelled && why == FinishReason::Cancelled)) {
    res.errors.push_back(who + " ended " + finish_reason_name(why) + ": " + o.final.error);
    return;
  }
  if (req.sampling.temperature > 0) {
    if (done && o.tokens.size() != static_cast<size_t>(req.max_tokens)) {
      res.errors.push_back(who + " (sampled) got " + std::to_string(o.tokens.size()) + " tokens");
    }
    return;
  }
  auto ref = eng.reference(req.prompt, req.max_tokens, req.ignore_eos);
  if (!req.ignore_eos && !ref.empty() && ref.back() == engine_config().eog_id) ref.pop_back();
  const bool prefix =
      o.tokens.size() <= ref.size() && std::equal(o.tokens.begin(), o.tokens.end(), ref.begin());
  if (!prefix || (done && o.tokens.size() != ref.size())) {
    res.errors.push_back(who + " produced tokens other than its reference");
  }
}

// Runs one request to its end as planned; false when it hung.
bool run_request(LoopCore& core, const Plan& p, Registry& reg, const engine::FakeEngine& eng,
                 ClientResult& res) {
  std::shared_ptr<RequestHandle> h;
  try {
    h = core.submit(p.req);
  } catch (const SubmitError& e) {
    res.errors.push_back(std::string("submit refused: ") + e.what());
    return true;
  }
  auto t = std::make_shared<Track>();
  {
    std::lock_guard<std::mutex> lock(reg.mu);
    reg.tracks[h->id()] = t;
  }
  testing::Outcome o;
  const auto limit = 60s;  // only detects a hang
  if (p.action != Action::ReadAll) {
    if (p.after_tokens == 0) std::this_thread::sleep_for(std::chrono::microseconds(p.wait_us));
    while (!o.finished && static_cast<int32_t>(o.tokens.size()) < p.after_tokens) {
      if (!read_one(*h, o, *t, limit)) return false;
    }
    if (p.action == Action::StallThenRead) {
      std::this_thread::sleep_for(std::chrono::milliseconds(p.pause_ms));
    } else if (p.action == Action::Drop || p.action == Action::CancelAndDrop) {
      if (p.action == Action::CancelAndDrop) t->cancelled.store(true);
      t->dropped.store(true);
      if (p.action == Action::CancelAndDrop) h->cancel();
      std::lock_guard<std::mutex> lock(reg.mu);
      reg.dropped.push_back(h);
      return true;
    } else {
      t->cancelled.store(true);
      h->cancel();
    }
  }
  while (!o.finished) {
    if (!read_one(*h, o, *t, limit)) return false;
  }
  check_outcome(p, o, eng, res);
  return true;
}

void client(int index, LoopCore& core, Registry& reg, const engine::FakeEngine& eng,
            ClientResult& res) {
  std::mt19937 rng(1000 + static_cast<uint32_t>(index));
  std::vector<std::vector<int32_t>> prefixes;
  for (int i = 0; i < 3; ++i) prefixes.push_back(testing::make_prompt(20 + 30 * i, i, kVocab));
  for (int round = 0; round < kRounds; ++round) {
    const Plan p = make_plan(rng, prefixes);
    ++res.requests;
    if (!run_request(core, p, reg, eng, res)) {
      res.errors.push_back("a request never ended (client " + std::to_string(index) + ")");
      return;
    }
  }
}

// What a run exercised.
struct Exercised {
  Metrics metrics;
  int64_t steps = 0;
  int64_t pauses = 0;
  size_t prefill_preemptions_seen = 0;
  int64_t loading_while_decoding = 0;
};

// Runs the clients against a core stepped by its own thread and checks what every run must
// hold. `disk_dir`: the disk tier's directory ("" = off), its jobs delayed at random.
Exercised run_clients(const std::string& disk_dir) {
  auto saved = log::level();
  log::set_level(log::Level::Warn);  // thousands of request lines otherwise
  engine::FakeEngine eng(engine_config());
  SchedConfig config = sched_config();
  if (!disk_dir.empty()) {
    config.kv_disk_dir = disk_dir;
    config.kv_disk_space_mb = 8;
  }
  LoopCore core(eng, config);
  if (kv::DiskTier* tier = core.disk_tier()) {
    // A slow, uneven disk: a load or save takes up to ~30 steps.
    tier->set_load_delay(kv::testing::random_delay(11, 3ms));
    tier->set_save_delay(kv::testing::random_delay(12, 5ms));
  }
  Registry reg;
  Checker checker(core, eng, reg);
  std::atomic<bool> stop{false};
  std::thread loop([&] { checker.run(stop); });
  std::vector<ClientResult> results(kClients);
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&, i] { client(i, core, reg, eng, results[i]); });
  }
  for (auto& c : clients) c.join();
  // Dropped handles end through their cancel or the send-stall timeout; each expires when the
  // loop lets its request go.
  auto expired = [&] {
    std::lock_guard<std::mutex> lock(reg.mu);
    return std::all_of(reg.dropped.begin(), reg.dropped.end(),
                       [](const auto& w) { return w.expired(); });
  };
  for (int i = 0; i < 3000 && !expired(); ++i) std::this_thread::sleep_for(10ms);
  const bool all_dropped_ended = expired();
  stop.store(true);
  core.wake();
  loop.join();
  eng.set_on_step({});
  log::set_level(saved);
  if (core.disk_tier()) {  // the saves still queued hand their pins back once written
    EXPECT_TRUE(kv::testing::wait_idle(*core.disk_tier()));
    core.step();
  }

  EXPECT_EQ(checker.error(), "");
  EXPECT_TRUE(all_dropped_ended) << "a request whose client hung up never ended";
  for (const auto& r : results) {
    EXPECT_EQ(r.requests, kRounds);
    for (const auto& e : r.errors) ADD_FAILURE() << e;
  }
  EXPECT_FALSE(core.has_requests());
  EXPECT_EQ(core.pool().used(), 0) << "blocks still pinned";
  EXPECT_EQ(core.table_refs(), 0);
  Exercised x;
  x.metrics = core.metrics();
  EXPECT_EQ(x.metrics.parked_requests, 0);
  EXPECT_EQ(x.metrics.loading_requests, 0);
  for (const auto& [kind, n] : x.metrics.kv_disk_errors_total) EXPECT_EQ(n, 0u) << kind;
  x.steps = checker.steps();
  x.pauses = checker.pauses_seen();
  x.prefill_preemptions_seen = checker.prefill_preemptions_seen();
  x.loading_while_decoding = checker.loading_while_decoding();
  const Metrics& m = x.metrics;
  std::cout << x.steps << " steps, " << m.kv_preemptions_total << " KV-pressure parks, "
            << m.prefill_preemptions_total << " prefill preemptions and max_wait parks ("
            << x.prefill_preemptions_seen << " seen for a shorter request), "
            << m.prefill_resumes_total << " resumes, " << x.pauses << " paused decode rows, "
            << m.requests_total.at("cancelled") << " cancelled, " << m.requests_total.at("failed")
            << " failed\n";
  return x;
}

TEST(SchedStress, ClientsCancellingStallingAndHangingUpWhileRequestsAreParked) {
  const Exercised x = run_clients("");
  EXPECT_GT(x.metrics.kv_preemptions_total, 0u);
  EXPECT_GT(x.metrics.prefill_preemptions_total, 0u);
  EXPECT_GT(x.prefill_preemptions_seen, 0u) << "no park for a shorter request";
  EXPECT_GT(x.pauses, 0) << "no client ever filled its channel";
}

TEST(SchedStress, TheSameWithTheDiskTierSwappingOnASlowUnevenDisk) {
  kv::testing::ScratchDir dir(/*in_memory=*/true);
  const Exercised x = run_clients(dir.path());
  const Metrics& m = x.metrics;
  EXPECT_GT(m.kv_preemptions_total, 0u);
  EXPECT_GT(x.pauses, 0) << "no client ever filled its channel";
  EXPECT_GT(m.kv_disk_saves_total, 0u);
  EXPECT_GT(m.kv_disk_hits_total, 0u) << "no prefix came back from the disk";
  EXPECT_GT(m.kv_disk_loaded_tokens_total, 0u);
  EXPECT_GT(x.loading_while_decoding, 0) << "no load was ever in flight while others decoded";
  std::cout << m.kv_disk_saves_total << " segments saved, " << m.kv_disk_hits_total
            << " prefixes found on disk (" << m.kv_disk_loaded_tokens_total << " tokens loaded), "
            << x.loading_while_decoding << " steps decoding while a load was in flight\n";
}

}  // namespace
}  // namespace baton::sched
