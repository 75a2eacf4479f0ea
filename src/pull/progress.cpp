#include "pull/progress.h"

#include <fmt/format.h>

namespace baton::pull {
namespace {

constexpr auto kTtyPeriod = std::chrono::milliseconds(200);
constexpr auto kPlainPeriod = std::chrono::seconds(5);

}  // namespace

std::string format_bytes(uint64_t n) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (n < 1024) return fmt::format("{} B", n);
  double v = static_cast<double>(n) / 1024;
  int u = 0;
  while (v >= 1024 && u < 3) {
    v /= 1024;
    ++u;
  }
  return v < 10 && u >= 2 ? fmt::format("{:.2f} {}", v, kUnits[u])
                          : fmt::format("{:.1f} {}", v, kUnits[u]);
}

std::string format_duration(double secs) {
  if (secs < 0 || secs > 1e8) return "?";
  auto s = static_cast<uint64_t>(secs + 0.5);
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

std::string progress_text(uint64_t done, uint64_t total, double rate) {
  std::string rate_s = rate > 0 ? format_bytes(static_cast<uint64_t>(rate)) + "/s" : "-- B/s";
  if (total == 0) return fmt::format("{}  {}", format_bytes(done), rate_s);
  const double pct = 100.0 * static_cast<double>(done) / static_cast<double>(total);
  std::string eta =
      rate > 0 && done <= total ? format_duration(static_cast<double>(total - done) / rate) : "?";
  return fmt::format("{} / {}  {:5.1f}%  {}  ETA {}", format_bytes(done), format_bytes(total), pct,
                     rate_s, eta);
}

void Progress::start(uint64_t from, uint64_t total) {
  from_ = from;
  total_ = total;
  done_ = from;
  started_ = Clock::now();
  // A terminal gets its bar at once; plain lines start at the first 10% step or after 5 s.
  last_emit_ = tty_ ? Clock::time_point{} : started_;
  emitted_ = UINT64_MAX;
  last_decile_ = total > 0 ? static_cast<int>(10 * from / total) : -1;
  active_ = true;
}

void Progress::update(uint64_t done) {
  if (out_ == nullptr || !active_) return;
  done_ = done;
  const auto now = Clock::now();
  if (tty_) {
    if (now - last_emit_ >= kTtyPeriod) emit(done, now, false);
    return;
  }
  const int decile = total_ > 0 ? static_cast<int>(10 * done / total_) : -1;
  if (decile > last_decile_ || now - last_emit_ >= kPlainPeriod) {
    last_decile_ = std::max(decile, last_decile_);
    emit(done, now, false);
  }
}

void Progress::finish() {
  if (out_ == nullptr || !active_) return;
  active_ = false;
  if (done_ != emitted_) emit(done_, Clock::now(), true);
  if (tty_) std::fputc('\n', out_);
  std::fflush(out_);
}

void Progress::emit(uint64_t done, Clock::time_point now, bool last) {
  last_emit_ = now;
  emitted_ = done;
  const double secs = std::chrono::duration<double>(now - started_).count();
  // A rate over the first instants of a transfer says nothing; the last report always has one.
  const bool measured = secs >= 0.2 || ((last || (total_ > 0 && done >= total_)) && secs > 0);
  const double rate = measured ? static_cast<double>(done - from_) / secs : 0;
  const std::string text = progress_text(done, total_, rate);
  if (tty_) {
    // \x1b[K clears what a longer earlier line left on the right.
    std::fprintf(out_, "\r%s\x1b[K", text.c_str());
  } else {
    std::fprintf(out_, "progress: %s\n", text.c_str());
  }
  std::fflush(out_);
}

}  // namespace baton::pull
