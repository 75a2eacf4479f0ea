#include "chat/protected_strings.h"

#include <algorithm>
#include <stdexcept>

#include "util/utf8.h"

namespace baton::chat {

namespace {

// U+F0000 leads every sentinel and U+F0001 + i names protected text i. Text that already holds
// U+F0000 is itself protected (as text 0), so restore() never mistakes a user's character for
// a sentinel.
constexpr char32_t kLead = 0xF0000;
constexpr size_t kMaxTexts = 0xFFFFD - 0xF0001;

// The 4-byte character at `i`, or 0 when there is none.
char32_t four_byte_at(std::string_view s, size_t i) {
  if (i + 4 > s.size() || (static_cast<unsigned char>(s[i]) & 0xF8) != 0xF0) return 0;
  char32_t c = static_cast<unsigned char>(s[i]) & 0x07;
  for (size_t k = 1; k < 4; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    c = (c << 6) | (b & 0x3F);
  }
  return c;
}

}  // namespace

size_t ProtectedStrings::prefix_key(std::string_view s, size_t i) {
  return static_cast<size_t>(static_cast<unsigned char>(s[i])) << 8 |
         static_cast<unsigned char>(s[i + 1]);
}

ProtectedStrings::ProtectedStrings(std::vector<std::string> texts) : by_prefix_(1 << 16) {
  std::string lead;
  util::append_utf8(lead, kLead);
  texts_.push_back(lead);
  for (auto& t : texts) {
    if (!t.empty() && t != lead) texts_.push_back(std::move(t));
  }
  if (texts_.size() > kMaxTexts) throw std::length_error("too many protected texts");
  for (size_t i = 0; i < texts_.size(); ++i) {
    if (texts_[i].size() == 1) {
      single_.push_back(i);
    } else {
      by_prefix_[prefix_key(texts_[i], 0)].push_back(i);
    }
  }
  for (auto& v : by_prefix_) {
    std::stable_sort(v.begin(), v.end(),
                     [&](size_t a, size_t b) { return texts_[a].size() > texts_[b].size(); });
  }
}

std::string ProtectedStrings::protect(std::string_view text) const {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    size_t hit = texts_.size();
    if (i + 1 < text.size()) {
      for (size_t k : by_prefix_[prefix_key(text, i)]) {
        if (text.compare(i, texts_[k].size(), texts_[k]) == 0) {
          hit = k;
          break;
        }
      }
    }
    for (size_t k = 0; hit == texts_.size() && k < single_.size(); ++k) {
      if (text[i] == texts_[single_[k]][0]) hit = single_[k];
    }
    if (hit == texts_.size()) {
      out += text[i++];
      continue;
    }
    util::append_utf8(out, kLead);
    util::append_utf8(out, static_cast<uint32_t>(kLead + 1 + hit));
    i += texts_[hit].size();
  }
  return out;
}

// An explicit stack, not recursion: the context holds what clients sent, so its depth must not
// decide how deep this thread's stack goes.
void ProtectedStrings::protect(nlohmann::ordered_json& root) const {
  std::vector<nlohmann::ordered_json*> todo = {&root};
  while (!todo.empty()) {
    nlohmann::ordered_json& value = *todo.back();
    todo.pop_back();
    if (value.is_string()) {
      value = protect(value.get_ref<const std::string&>());
    } else if (value.is_array()) {
      for (auto& v : value) todo.push_back(&v);
    } else if (value.is_object()) {
      nlohmann::ordered_json out = nlohmann::ordered_json::object();
      for (auto& [k, v] : value.items()) out[protect(k)] = std::move(v);
      value = std::move(out);
      // Children are rewritten in place from here on, so these addresses stay valid.
      for (auto& v : value) todo.push_back(&v);
    }
  }
}

ProtectedStrings::Restored ProtectedStrings::restore(std::string_view rendered) const {
  Restored r;
  r.text.reserve(rendered.size());
  for (size_t i = 0; i < rendered.size();) {
    if (four_byte_at(rendered, i) == kLead) {
      const char32_t tag = four_byte_at(rendered, i + 4);
      if (tag > kLead && tag - kLead - 1 < texts_.size()) {
        const std::string& original = texts_[tag - kLead - 1];
        r.literal.emplace_back(r.text.size(), original.size());
        r.text += original;
        i += 8;
        continue;
      }
    }
    r.text += rendered[i++];
  }
  return r;
}

}  // namespace baton::chat
