// The matcher is a pushdown automaton run on every parse at once: a state is the set of parse
// stacks that the text so far allows. A stack is its top position (always a byte class, or
// "accept") over a chain of return frames; frames are hash-consed, so a stack is two integers
// and a state is a sorted list of them. States are interned and their byte transitions cached,
// which makes the automaton a DFA discovered lazily: the token mask walks the vocabulary trie
// with table lookups and only computes a transition the first time it is taken.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "grammar/grammar.h"

namespace baton::grammar {
namespace {

constexpr uint32_t kAcceptPos = 0xFFFFFFFFu;
constexpr int32_t kUnknown = -2;
// A request whose grammar keeps producing new states (deep nesting, long bounded repetitions)
// drops the cached ones it no longer stands in, so its memory stays bounded.
constexpr size_t kMaxStates = 20000;

uint64_t pack(uint32_t pos, uint32_t frame) {
  return (uint64_t(pos) << 32) | frame;
}
uint32_t pos_of(uint64_t s) {
  return static_cast<uint32_t>(s >> 32);
}
uint32_t frame_of(uint64_t s) {
  return static_cast<uint32_t>(s);
}

struct VecHash {
  size_t operator()(const std::vector<uint64_t>& v) const {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ v.size();
    for (uint64_t x : v) h = (h ^ x) * 0x100000001B3ull + (h >> 29);
    return static_cast<size_t>(h);
  }
};

}  // namespace

struct Matcher::Impl {
  struct Frame {
    uint32_t ret;
    uint32_t parent;
  };
  struct State {
    std::vector<uint64_t> stacks;
    bool can_end = false;
    bool must_end = false;
    std::vector<int32_t> trans;
  };

  std::shared_ptr<const Grammar> g;
  std::vector<Frame> frames{{0, 0}};  // frame 0: the bottom (returning from it accepts)
  std::unordered_map<uint64_t, uint32_t> frame_ids;
  std::vector<State> states;
  std::unordered_map<std::vector<uint64_t>, int32_t, VecHash> state_ids;
  StateId current = kDead;
  std::unordered_set<uint64_t> visited;  // scratch for closure

  uint32_t frame(uint32_t ret, uint32_t parent) {
    auto [it, added] =
        frame_ids.try_emplace(pack(ret, parent), static_cast<uint32_t>(frames.size()));
    if (added) frames.push_back({ret, parent});
    return it->second;
  }

  // Every stack reachable from (pos, frame) without consuming a byte, into out.
  void closure(uint32_t pos, uint32_t fr, std::vector<uint64_t>& out) {
    if (!visited.insert(pack(pos, fr)).second) return;
    const Element& e = g->elements()[pos];
    switch (e.kind) {
      case Element::Kind::Bytes:
        out.push_back(pack(pos, fr));
        return;
      case Element::Kind::Rule: {
        // A rule in tail position returns straight to our caller: no frame, so a right-
        // recursive repetition keeps a flat stack however long it runs.
        const bool tail = g->elements()[pos + 1].kind == Element::Kind::End;
        const uint32_t callee_frame = tail ? fr : frame(pos + 1, fr);
        for (uint32_t a : g->alternatives(e.index)) closure(a, callee_frame, out);
        return;
      }
      case Element::Kind::End:
        if (fr == 0) {
          out.push_back(pack(kAcceptPos, 0));
        } else {
          const Frame f = frames[fr];
          closure(f.ret, f.parent, out);
        }
        return;
    }
  }

  StateId intern(std::vector<uint64_t>&& stacks) {
    if (stacks.empty()) return kDead;
    std::sort(stacks.begin(), stacks.end());
    stacks.erase(std::unique(stacks.begin(), stacks.end()), stacks.end());
    auto it = state_ids.find(stacks);
    if (it != state_ids.end()) return it->second;
    State s;
    s.can_end = std::binary_search(stacks.begin(), stacks.end(), pack(kAcceptPos, 0));
    s.must_end = s.can_end && stacks.size() == 1;
    s.trans.assign(256, kUnknown);
    s.stacks = stacks;
    const auto id = static_cast<StateId>(states.size());
    states.push_back(std::move(s));
    state_ids.emplace(std::move(stacks), id);
    return id;
  }

  StateId start() {
    std::vector<uint64_t> out;
    visited.clear();
    for (uint32_t a : g->alternatives(g->root())) closure(a, 0, out);
    return intern(std::move(out));
  }

  StateId step(StateId s, uint8_t b) {
    if (s == kDead) return kDead;
    int32_t& cached = states[s].trans[b];
    if (cached != kUnknown) return cached;
    std::vector<uint64_t> out;
    visited.clear();
    for (uint64_t st : states[s].stacks) {
      const uint32_t pos = pos_of(st);
      if (pos == kAcceptPos) continue;
      const Element& e = g->elements()[pos];
      if (g->classes()[e.index].test(b)) closure(pos + 1, frame_of(st), out);
    }
    const StateId next = intern(std::move(out));
    states[s].trans[b] = next;  // `cached` may dangle: intern can grow `states`
    return next;
  }

  void compact() {
    if (states.size() <= kMaxStates || current == kDead) return;
    std::vector<uint64_t> keep = states[current].stacks;
    states.clear();
    state_ids.clear();
    current = intern(std::move(keep));
  }
};

Matcher::Matcher(std::shared_ptr<const Grammar> g) : impl_(std::make_unique<Impl>()) {
  impl_->g = std::move(g);
  impl_->current = impl_->start();
}
Matcher::~Matcher() = default;
Matcher::Matcher(Matcher&&) noexcept = default;
Matcher& Matcher::operator=(Matcher&&) noexcept = default;

bool Matcher::accept_byte(uint8_t b) {
  const StateId next = impl_->step(impl_->current, b);
  if (next == kDead) return false;
  impl_->current = next;
  impl_->compact();
  return true;
}

bool Matcher::accept(std::string_view s) {
  StateId st = impl_->current;
  for (unsigned char c : s) {
    st = impl_->step(st, c);
    if (st == kDead) return false;
  }
  impl_->current = st;
  impl_->compact();
  return true;
}

bool Matcher::can_end() const {
  return state_can_end(impl_->current);
}
bool Matcher::must_end() const {
  return impl_->current != kDead && impl_->states[impl_->current].must_end;
}
Matcher::StateId Matcher::state() const {
  return impl_->current;
}
Matcher::StateId Matcher::next(StateId s, uint8_t b) {
  return impl_->step(s, b);
}
bool Matcher::state_can_end(StateId s) const {
  return s != kDead && impl_->states[s].can_end;
}
size_t Matcher::n_states() const {
  return impl_->states.size();
}

bool matches(const std::shared_ptr<const Grammar>& g, std::string_view text) {
  Matcher m(g);
  return m.accept(text) && m.can_end();
}

}  // namespace baton::grammar
