#include "pull/cache_list.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "pull/progress.h"

namespace baton::pull {
namespace {

bool has_suffix(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string local_time(std::filesystem::file_time_type t) {
  const auto sys = std::chrono::file_clock::to_sys(t);
  const std::time_t tt = std::chrono::system_clock::to_time_t(
      std::chrono::time_point_cast<std::chrono::system_clock::duration>(sys));
  std::tm tm{};
  localtime_r(&tt, &tm);
  return fmt::format("{:%Y-%m-%d %H:%M}", tm);
}

}  // namespace

std::vector<CachedModel> list_cache(const std::filesystem::path& cache) {
  std::vector<CachedModel> out;
  std::error_code ec;
  if (!std::filesystem::is_directory(cache, ec)) return out;
  auto it = std::filesystem::recursive_directory_iterator(
      cache, std::filesystem::directory_options::skip_permission_denied, ec);
  for (; !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    const std::string name = it->path().filename().string();
    CachedModel m;
    m.partial = has_suffix(name, ".part");
    if (!m.partial && !has_suffix(name, ".gguf")) continue;
    m.path = it->path();
    m.size = it->file_size(ec);
    m.modified = it->last_write_time(ec);
    out.push_back(std::move(m));
  }
  std::sort(out.begin(), out.end(),
            [](const CachedModel& a, const CachedModel& b) { return a.path < b.path; });
  return out;
}

std::string format_cache_listing(const std::filesystem::path& cache,
                                 const std::vector<CachedModel>& models) {
  if (models.empty()) {
    return fmt::format(
        "no models in {}\ndownload one with: baton pull REPO/FILE.gguf (or REPO --quant Q4_K_M, "
        "or an https:// URL)\n",
        cache.string());
  }
  std::string out = fmt::format("{:<11} {:<16}  {}\n", "SIZE", "MODIFIED", "PATH");
  int partial = 0;
  for (const auto& m : models) {
    out += fmt::format("{:<11} {:<16}  {}{}\n", format_bytes(m.size), local_time(m.modified),
                       m.path.string(), m.partial ? "  (partial: baton pull resumes it)" : "");
    partial += m.partial ? 1 : 0;
  }
  const size_t complete = models.size() - static_cast<size_t>(partial);
  out += fmt::format(
      "{} model{} in {}{}\n", complete, complete == 1 ? "" : "s", cache.string(),
      partial ? fmt::format(", {} unfinished download{}", partial, partial == 1 ? "" : "s") : "");
  return out;
}

}  // namespace baton::pull
