#include "grammar/json_schema_keys.h"

#include <fmt/format.h>

#include <cstdint>
#include <map>

#include "grammar/json_schema_scalars.h"

namespace baton::grammar::schema_detail {
namespace {

const char* const kQuote = R"("\"")";

// Property names as code-point sequences. Nodes live in one vector and point at their children
// by index, so a long name neither builds nor frees a chain of nested objects.
struct NameTrie {
  struct Node {
    bool terminal = false;
    std::map<uint32_t, uint32_t> next;  // code point → node index
  };
  std::vector<Node> nodes = std::vector<Node>(1);

  // Adds the name unless it is not UTF-8 or longer than max_len code points (no key that
  // short can spell it).
  void insert(const std::string& s, int max_len) {
    std::vector<uint32_t> cps;
    for (size_t i = 0; i < s.size();) {
      const auto c = static_cast<unsigned char>(s[i]);
      const size_t n = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
      if (i + n > s.size() || cps.size() == static_cast<size_t>(max_len)) return;
      uint32_t cp = n == 1 ? c : c & (0x3F >> (n - 1));
      for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
      cps.push_back(cp);
      i += n;
    }
    uint32_t at = 0;
    for (uint32_t cp : cps) {
      auto [it, added] = nodes[at].next.try_emplace(cp, static_cast<uint32_t>(nodes.size()));
      if (added) nodes.emplace_back();
      at = it->second;
    }
    nodes[at].terminal = true;
  }
};

// One node of the walk: the alternatives gathered so far, and the class of characters that
// leave the trie here.
struct Frame {
  uint32_t node;
  int depth;
  std::map<uint32_t, uint32_t>::const_iterator child;
  std::vector<std::string> alts;
  std::string other;
};

}  // namespace

std::string extra_key_rest(const std::vector<std::string>& avoid, const ExtraKeyRules& r) {
  NameTrie trie;
  for (const auto& name : avoid) trie.insert(name, r.max_len);
  // The rest of a key after a prefix of some names, up to its closing quote: anything that does
  // not spell one of the names in full, and at most max_len characters long. Children's rules
  // are made before their parent's (a walk in depth-first order with an explicit stack, whose
  // height is at most max_len + 1).
  auto open = [&](uint32_t node, int depth) {
    Frame f{node, depth, trie.nodes[node].next.begin(), {}, R"([^"\\\x00-\x1F)"};
    if (!trie.nodes[node].terminal) f.alts.push_back(kQuote);
    return f;
  };
  std::vector<Frame> stack;
  stack.push_back(open(0, 0));
  std::string rest;
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.child != trie.nodes[f.node].next.end()) {
      f.other += class_char(f.child->first);
      const uint32_t next = f.child->second;
      const int depth = f.depth + 1;
      stack.push_back(open(next, depth));  // f is not used past this point
      continue;
    }
    if (f.depth < r.max_len) {
      const int more = r.max_len - f.depth - 1;
      f.alts.push_back(more > 0
                           ? fmt::format("{}] {}{{0,{}}} {}", f.other, r.key_char, more, kQuote)
                           : fmt::format("{}] {}", f.other, kQuote));
    }
    std::string body;
    for (const auto& a : f.alts) body += (body.empty() ? "" : " | ") + a;
    rest = body.empty() ? "" : r.rule(r.hint, body);
    stack.pop_back();
    if (stack.empty()) break;
    Frame& parent = stack.back();
    if (!rest.empty()) {
      parent.alts.push_back(fmt::format("[{}] {}", class_char(parent.child->first), rest));
    }
    ++parent.child;
  }
  return fmt::format("{} {}", kQuote, rest);
}

}  // namespace baton::grammar::schema_detail
