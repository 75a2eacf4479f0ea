#pragma once
// Choosing a file of a hub repo from its listing (GET /api/models/REPO/tree/REVISION).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace baton::pull {

struct RepoFile {
  std::string path;
  uint64_t size = 0;
};

// The files of a tree listing (a JSON array of {type, path, size, ...}); folders are skipped.
// Throws PullError when the body is not such an array.
std::vector<RepoFile> parse_tree(const std::string& json);

// The quantization named in a GGUF file name ("Q4_K_M", "IQ2_XXS", "F16", ...), uppercase, or
// "" when the name carries none.
std::string quant_of(std::string_view file_name);

// The .gguf file of `files` to download. quant empty: the repo's only model file. Otherwise the
// file whose quantization is `quant` (case-insensitive), else the only one whose name contains
// it. Projector files (mmproj*) are never picked. Throws PullError listing what the repo has when
// nothing or more than one file fits, or the match is a split (-00001-of-0000N) model.
std::string pick_gguf(const std::vector<RepoFile>& files, std::string_view quant,
                      std::string_view repo);

}  // namespace baton::pull
