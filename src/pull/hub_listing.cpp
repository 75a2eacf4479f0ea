#include "pull/hub_listing.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <set>

#include "pull/pull.h"

namespace baton::pull {
namespace {

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string base_name(std::string_view path) {
  size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

bool ends_with_gguf(std::string_view path) {
  return path.size() > 5 && upper(path.substr(path.size() - 5)) == ".GGUF";
}

// "Q4_K_M", "IQ2_XXS", "Q8_0", "TQ1_0": [I|T]Q<digit>...; "F16", "BF16", "FP16", "MXFP4", ...
bool looks_like_quant(const std::string& t) {
  size_t i = 0;
  if (t.size() > 1 && (t[0] == 'I' || t[0] == 'T') && t[1] == 'Q') i = 1;
  if (t.size() > i + 1 && t[i] == 'Q' && std::isdigit(static_cast<unsigned char>(t[i + 1]))) {
    return true;
  }
  return t == "F16" || t == "BF16" || t == "F32" || t == "FP16" || t == "FP32" || t == "MXFP4";
}

// "model-00001-of-00003.gguf": one shard of a model split across files.
bool is_split_shard(const std::string& name) {
  size_t of = name.find("-of-");
  return of != std::string::npos && of >= 6 && name[of - 6] == '-' &&
         std::all_of(name.begin() + of - 5, name.begin() + of,
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

std::string list_quants(const std::vector<std::string>& names) {
  std::set<std::string> quants;
  for (const auto& n : names) {
    std::string q = quant_of(n);
    quants.insert(q.empty() ? n : q);
  }
  return fmt::format("{}", fmt::join(quants, ", "));
}

}  // namespace

std::vector<RepoFile> parse_tree(const std::string& json) {
  auto doc = nlohmann::json::parse(json, nullptr, false);
  if (!doc.is_array()) {
    throw PullError(
        "the hub's file listing is not a JSON array (is HF_ENDPOINT a Hugging Face hub?)");
  }
  std::vector<RepoFile> files;
  for (const auto& e : doc) {
    if (!e.is_object() || e.value("type", "") != "file" || !e.contains("path") ||
        !e["path"].is_string()) {
      continue;
    }
    RepoFile f;
    f.path = e["path"].get<std::string>();
    if (e.contains("size") && e["size"].is_number_unsigned()) f.size = e["size"].get<uint64_t>();
    files.push_back(std::move(f));
  }
  return files;
}

std::string quant_of(std::string_view file_name) {
  std::string stem = upper(base_name(file_name));
  if (ends_with_gguf(stem)) stem.resize(stem.size() - 5);
  // The quantization is the last '-' or '.' separated token that looks like one; its own
  // parts are joined by '_' ("Q4_K_M"), so '_' does not split.
  std::string found, token;
  for (size_t i = 0; i <= stem.size(); ++i) {
    if (i == stem.size() || stem[i] == '-' || stem[i] == '.') {
      if (looks_like_quant(token)) found = token;
      token.clear();
    } else {
      token += stem[i];
    }
  }
  return found;
}

std::string pick_gguf(const std::vector<RepoFile>& files, std::string_view quant,
                      std::string_view repo) {
  std::vector<std::string> models;
  for (const auto& f : files) {
    std::string name = base_name(f.path);
    if (ends_with_gguf(name) && upper(name).rfind("MMPROJ", 0) != 0) models.push_back(f.path);
  }
  if (models.empty()) {
    throw PullError(
        fmt::format("{} has no .gguf file at this revision; pick a repo that "
                    "publishes GGUF models (their names usually end in -GGUF)",
                    repo));
  }
  std::vector<std::string> hits;
  if (quant.empty()) {
    hits = models;
  } else {
    const std::string q = upper(quant);
    for (const auto& m : models) {
      if (quant_of(m) == q) hits.push_back(m);
    }
    if (hits.empty()) {
      for (const auto& m : models) {
        if (upper(base_name(m)).find(q) != std::string::npos) hits.push_back(m);
      }
    }
  }
  if (hits.size() == 1 && !is_split_shard(base_name(hits[0]))) return hits[0];
  if (!hits.empty() && std::all_of(hits.begin(), hits.end(), [](const std::string& h) {
        return is_split_shard(base_name(h));
      })) {
    throw PullError(
        fmt::format("{} splits this model across {} files ({} ...); baton loads one "
                    "file, so pick a smaller quantization that is a single file ({})",
                    repo, hits.size(), hits[0], list_quants(models)));
  }
  if (quant.empty()) {
    throw PullError(
        fmt::format("{} has {} GGUF files; choose one with --quant ({}) or name it "
                    "as {}/FILE.gguf",
                    repo, models.size(), list_quants(models), repo));
  }
  if (hits.empty()) {
    throw PullError(fmt::format("{} has no GGUF file for --quant {}; it has: {}", repo, quant,
                                list_quants(models)));
  }
  throw PullError(fmt::format("--quant {} matches {} files of {} ({}); give the file as {}/FILE",
                              quant, hits.size(), repo, fmt::join(hits, ", "), repo));
}

}  // namespace baton::pull
