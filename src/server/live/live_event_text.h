#pragma once
// The live stream's events as server-sent-event text (docs: README "Live view").
#include <cstdint>
#include <string>

#include "sched/live_feed.h"

namespace baton::server {

// `id: <seq>` and `event: step` with the record as compact JSON:
// {"seq","t","ms","pred","rows":[[request, decode_rows, prefill_tokens, position]...],
//  "events":[{"req","what","detail", and the request's figures at that point: "prompt_tokens",
//  "cached_tokens","disk_tokens","generated","ttft_ms","max_gap_ms"}...],
//  "gap":{"req","ms","since"}} (gap only when a stream
// produced a second token in the step).
std::string step_event_text(const sched::StepRecord& r);
// `event: lost`: `steps` records were overwritten before this viewer read them.
std::string lost_event_text(uint64_t steps, uint64_t resumed_at);

}  // namespace baton::server
