#include "server/live/live_event_text.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace baton::server {

using nlohmann::json;

namespace {

// Milliseconds to the microsecond: the page needs no more, and the stream stays small.
double round_ms(double ms) {
  return static_cast<double>(static_cast<int64_t>(ms * 1000 + 0.5)) / 1000;
}

}  // namespace

std::string step_event_text(const sched::StepRecord& r) {
  json rows = json::array();
  for (const auto& row : r.rows) {
    rows.push_back({row.request, row.decode_rows, row.prefill_tokens, row.position});
  }
  json j = {{"seq", r.seq},
            {"t", round_ms(r.start_ms)},
            {"ms", round_ms(r.ms)},
            {"pred", round_ms(r.predicted_ms)},
            {"rows", std::move(rows)}};
  if (!r.events.empty()) {
    json events = json::array();
    for (const auto& e : r.events) {
      json ev = {{"req", e.request}, {"what", e.what}, {"detail", e.detail}};
      const auto& f = e.figures;
      for (auto [name, v] : {std::pair{"prompt_tokens", f.prompt_tokens},
                             {"cached_tokens", f.cached_tokens},
                             {"disk_tokens", f.disk_tokens},
                             {"generated", f.generated}}) {
        if (v >= 0) ev[name] = v;
      }
      if (f.ttft_ms >= 0) ev["ttft_ms"] = round_ms(f.ttft_ms);
      if (f.max_gap_ms >= 0) ev["max_gap_ms"] = round_ms(f.max_gap_ms);
      events.push_back(std::move(ev));
    }
    j["events"] = std::move(events);
  }
  if (r.worst_gap.request != 0) {
    j["gap"] = {{"req", r.worst_gap.request},
                {"ms", round_ms(r.worst_gap.ms)},
                {"since", r.worst_gap.since_step}};
  }
  return fmt::format("id: {}\nevent: step\ndata: {}\n\n", r.seq,
                     j.dump(-1, ' ', false, json::error_handler_t::replace));
}

std::string lost_event_text(uint64_t steps, uint64_t resumed_at) {
  return fmt::format("event: lost\ndata: {{\"steps\":{},\"resumed_at\":{}}}\n\n", steps,
                     resumed_at);
}

}  // namespace baton::server
