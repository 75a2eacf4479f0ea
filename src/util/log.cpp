#include "util/log.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>

namespace baton::log {
namespace {

Level initial_level() {
  const char* env = std::getenv("BATON_LOG");
  if (!env) return Level::Info;
  if (!std::strcmp(env, "debug")) return Level::Debug;
  if (!std::strcmp(env, "warn")) return Level::Warn;
  if (!std::strcmp(env, "error")) return Level::Error;
  return Level::Info;
}

std::atomic<Level> g_level{initial_level()};
std::mutex g_mutex;
const char* kNames[] = {"DEBUG", "INFO ", "WARN ", "ERROR"};

}  // namespace

void set_level(Level l) {
  g_level = l;
}
Level level() {
  return g_level;
}

void write(Level l, std::string_view line) {
  using namespace std::chrono;
  auto now = system_clock::now();
  std::time_t t = system_clock::to_time_t(now);
  int ms = static_cast<int>(duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000);
  std::tm tm{};
  localtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &tm);
  std::lock_guard<std::mutex> lock(g_mutex);
  std::fprintf(stderr, "%s.%03d %s %.*s\n", stamp, ms, kNames[static_cast<int>(l)],
               static_cast<int>(line.size()), line.data());
}

}  // namespace baton::log
