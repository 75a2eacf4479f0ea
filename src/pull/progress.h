#pragma once
// Download progress on stderr: on a terminal one line redrawn with '\r' (bytes done / total,
// percent, rate, ETA); elsewhere (logs, CI) a plain line every 10% or every few seconds.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace baton::pull {

std::string format_bytes(uint64_t n);      // "512 B", "1.5 KiB", "468.6 MiB", "4.07 GiB"
std::string format_duration(double secs);  // "42s", "3m05s", "1h02m"

// One progress report. total 0: unknown. rate in bytes/s over this run (0: not known yet).
std::string progress_text(uint64_t done, uint64_t total, double rate);

class Progress {
 public:
  using Clock = std::chrono::steady_clock;
  Progress(std::FILE* out, bool tty) : out_(out), tty_(tty) {}

  // A transfer begins at byte `from` of `total` (0: unknown); the rate counts only new bytes.
  void start(uint64_t from, uint64_t total);
  void update(uint64_t done);
  void finish();  // the last report, then a newline on a terminal

 private:
  void emit(uint64_t done, Clock::time_point now, bool last);

  std::FILE* out_;
  bool tty_;
  uint64_t from_ = 0, total_ = 0, done_ = 0, emitted_ = UINT64_MAX;
  Clock::time_point started_{}, last_emit_{};
  int last_decile_ = -1;
  bool active_ = false;
};

}  // namespace baton::pull
