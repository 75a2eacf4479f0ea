#pragma once
// What `baton models` shows: the GGUF files in the cache, and downloads left unfinished.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace baton::pull {

struct CachedModel {
  std::filesystem::path path;
  uint64_t size = 0;
  std::filesystem::file_time_type modified;
  bool partial = false;  // a .part: an interrupted download that `baton pull` resumes
};

// Sorted by path; empty when the folder does not exist.
std::vector<CachedModel> list_cache(const std::filesystem::path& cache);

// The table `baton models` prints, or a note on how to fill an empty cache.
std::string format_cache_listing(const std::filesystem::path& cache,
                                 const std::vector<CachedModel>& models);

}  // namespace baton::pull
