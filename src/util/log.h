#pragma once
// One readable line per event on stderr: "2026-11-30 10:00:00.123 INFO  req=12 prefill ...".
// Levels below the global threshold (BATON_LOG=debug|info|warn|error, default info) are dropped.
#include <fmt/format.h>

#include <string_view>

namespace baton::log {

enum class Level { Debug = 0, Info = 1, Warn = 2, Error = 3 };

void set_level(Level l);
Level level();
void write(Level l, std::string_view line);

template <typename... Args>
void debug(fmt::format_string<Args...> f, Args&&... args) {
  if (level() <= Level::Debug) write(Level::Debug, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void info(fmt::format_string<Args...> f, Args&&... args) {
  if (level() <= Level::Info) write(Level::Info, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void warn(fmt::format_string<Args...> f, Args&&... args) {
  if (level() <= Level::Warn) write(Level::Warn, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void error(fmt::format_string<Args...> f, Args&&... args) {
  write(Level::Error, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace baton::log
