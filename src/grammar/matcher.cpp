// The matcher is a pushdown automaton run on every parse at once: a state is the set of parse
// stacks that the text so far allows. A stack is its top position (always a byte class, or
// "accept") over a chain of return frames; frames are hash-consed, so a stack is two integers
// and a state is a sorted list of them. States are interned and their byte transitions cached,
// which makes the automaton a DFA discovered lazily: the token mask walks the vocabulary trie
// with table lookups and only computes a transition the first time it is taken. The work a
// transition takes is counted (stacks visited, frames and states made) against the step's
// budget, so an ambiguous grammar whose stack sets keep growing fails its request instead of
// holding the thread that runs it.
#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>
#include <unordered_map>

#include "grammar/flat_index.h"
#include "grammar/grammar.h"

namespace baton::grammar {
namespace {

constexpr uint32_t kAcceptPos = 0xFFFFFFFFu;
constexpr int32_t kUnknown = -2;
// What the cache counts per state besides its stacks (its transition row and its key), and
// per frame (the frame and its hash entry).
constexpr size_t kStateBytes = 256 * sizeof(int32_t) + 96;
constexpr size_t kFrameBytes = 40;
// Work units are meant to cost about the same time each: a closure step (a random access into
// the step's visited set) is one, a new frame four more, a state GrammarLimits::kStateWork
// (mostly for its memory), and a stack whose class is tested one sixteenth.
constexpr uint64_t kFrameWork = 4;
constexpr size_t kScanPerUnit = 16;

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
    uint32_t min_bytes;  // the fewest bytes that complete this frame and those under it
  };
  struct State {
    std::vector<uint64_t> stacks;
    bool can_end = false;
    bool must_end = false;
    uint32_t min_bytes = Grammar::kNoEnd;
    std::vector<int32_t> trans;
  };

  std::shared_ptr<const Grammar> g;
  std::vector<Frame> frames{{0, 0, 0}};  // frame 0: the bottom (returning from it accepts)
  FlatIndex frame_ids;
  std::vector<State> states;
  std::unordered_map<std::vector<uint64_t>, int32_t, VecHash> state_ids;
  StateId current = kDead;
  size_t bytes = 0;  // held by states and frames, as the cache bound counts it
  uint64_t epoch = 0;
  uint64_t work = 0;
  uint64_t work_limit = 0;
  uint64_t granted = 0;        // what the step in progress was given
  FlatIndex visited;           // scratch for closure
  std::vector<uint64_t> todo;  // scratch for closure

  void charge(uint64_t units) {
    work += units;
    if (work > work_limit) {
      throw GrammarBudgetError(fmt::format(
          "the grammar keeps too many parses open at once: a step needed more than {} units of "
          "matching work (the limits are {} for one step and {} per token on average); make it "
          "less ambiguous (`[a-z]* [a-m]` can read one letter two ways) or use smaller "
          "repetition counts",
          granted, GrammarLimits::kStepWork, GrammarLimits::kMeanStepWork));
    }
  }
  void begin(uint64_t units) {
    granted = units;
    work_limit = work + units;
  }

  // The fewest bytes that complete one stack: the rest of its top alternative, then its frames.
  uint32_t stack_min_bytes(uint64_t st) const {
    if (pos_of(st) == kAcceptPos) return 0;
    return Grammar::add_min_bytes(g->min_bytes_from(pos_of(st)), frames[frame_of(st)].min_bytes);
  }

  uint32_t frame(uint32_t ret, uint32_t parent) {
    auto [id, added] = frame_ids.insert(pack(ret, parent), static_cast<uint32_t>(frames.size()));
    if (added) {
      charge(kFrameWork);
      frames.push_back(
          {ret, parent, Grammar::add_min_bytes(g->min_bytes_from(ret), frames[parent].min_bytes)});
      bytes += kFrameBytes;
    }
    return id;
  }

  // Every stack reachable from (pos, frame) without consuming a byte, into out. An explicit
  // work list: a grammar's chains of rules are as long as it likes.
  void closure(uint32_t pos, uint32_t fr, std::vector<uint64_t>& out) {
    todo.clear();
    todo.push_back(pack(pos, fr));
    while (!todo.empty()) {
      const uint64_t at = todo.back();
      todo.pop_back();
      charge(1);  // before the visited test: a wide rule reached many ways pushes many repeats
      if (!visited.insert(at, 0).second) continue;
      const uint32_t p = pos_of(at), f = frame_of(at);
      const Element& e = g->elements()[p];
      switch (e.kind) {
        case Element::Kind::Bytes:
          out.push_back(at);
          break;
        case Element::Kind::Rule: {
          // A rule in tail position returns straight to our caller: no frame, so a right-
          // recursive repetition keeps a flat stack however long it runs.
          const bool tail = g->elements()[p + 1].kind == Element::Kind::End;
          const uint32_t callee_frame = tail ? f : frame(p + 1, f);
          for (uint32_t a : g->alternatives(e.index)) todo.push_back(pack(a, callee_frame));
          break;
        }
        case Element::Kind::End:
          if (f == 0) {
            out.push_back(pack(kAcceptPos, 0));
          } else {
            todo.push_back(pack(frames[f].ret, frames[f].parent));
          }
          break;
      }
    }
  }

  StateId intern(std::vector<uint64_t>&& stacks) {
    if (stacks.empty()) return kDead;
    std::sort(stacks.begin(), stacks.end());
    stacks.erase(std::unique(stacks.begin(), stacks.end()), stacks.end());
    auto it = state_ids.find(stacks);
    if (it != state_ids.end()) return it->second;
    charge(GrammarLimits::kStateWork + stacks.size());
    State s;
    s.can_end = std::binary_search(stacks.begin(), stacks.end(), pack(kAcceptPos, 0));
    s.must_end = s.can_end && stacks.size() == 1;
    for (uint64_t st : stacks) s.min_bytes = std::min(s.min_bytes, stack_min_bytes(st));
    s.trans.assign(256, kUnknown);
    s.stacks = stacks;
    bytes += kStateBytes + 2 * stacks.size() * sizeof(uint64_t);
    const auto id = static_cast<StateId>(states.size());
    states.push_back(std::move(s));
    state_ids.emplace(std::move(stacks), id);
    return id;
  }

  StateId start() {
    begin(GrammarLimits::kStepWork);
    std::vector<uint64_t> out;
    visited.clear();
    for (uint32_t a : g->alternatives(g->root())) closure(a, 0, out);
    return intern(std::move(out));
  }

  StateId step(StateId s, uint8_t b) {
    if (s == kDead) return kDead;
    if (const int32_t cached = states[s].trans[b]; cached != kUnknown) return cached;
    std::vector<uint64_t> out;
    visited.clear();
    // Testing a stack's byte class is a sequential read, a fraction of a closure step's cost.
    charge(1 + states[s].stacks.size() / kScanPerUnit);
    for (uint64_t st : states[s].stacks) {
      const uint32_t pos = pos_of(st);
      if (pos == kAcceptPos) continue;
      const Element& e = g->elements()[pos];
      if (g->classes()[e.index].test(b)) closure(pos + 1, frame_of(st), out);
    }
    const StateId next = intern(std::move(out));
    states[s].trans[b] = next;  // after intern, which may grow `states`
    return next;
  }

  // Past the memory bound, keeps only the states `keep` points at (which get their new ids)
  // and the frames their stacks stand on.
  void compact(std::initializer_list<StateId*> keep) {
    if (bytes <= GrammarLimits::kMatcherBytes) return;
    std::vector<std::vector<uint64_t>> kept;
    for (StateId* id : keep) {
      kept.push_back(*id == kDead ? std::vector<uint64_t>{} : states[*id].stacks);
    }
    std::vector<Frame> old = std::move(frames);
    std::unordered_map<uint32_t, uint32_t> remap{{0, 0}};
    frames = {{0, 0, 0}};
    frame_ids.clear();
    states.clear();
    state_ids.clear();
    bytes = 0;
    ++epoch;
    work_limit = UINT64_MAX;  // rebuilding where it stands is not a step's work
    auto id = keep.begin();
    for (std::vector<uint64_t>& stacks : kept) {
      for (uint64_t& st : stacks) st = pack(pos_of(st), copy_frame(frame_of(st), old, remap));
      **id++ = intern(std::move(stacks));
    }
  }

  // The frame chain under old frame f, rebuilt in the new frame table (outermost first).
  uint32_t copy_frame(uint32_t f, const std::vector<Frame>& old,
                      std::unordered_map<uint32_t, uint32_t>& remap) {
    std::vector<uint32_t> chain;
    while (!remap.contains(f)) {
      chain.push_back(f);
      f = old[f].parent;
    }
    uint32_t to = remap[f];
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      to = frame(old[*it].ret, to);
      remap.emplace(*it, to);
    }
    return to;
  }

  StateId advance(StateId s, uint8_t b) {
    begin(GrammarLimits::kStepWork);
    return step(s, b);
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
  const StateId next = impl_->advance(impl_->current, b);
  if (next == kDead) return false;
  impl_->current = next;
  impl_->compact({&impl_->current});
  return true;
}

bool Matcher::accept(std::string_view s) {
  StateId st = impl_->current;
  for (unsigned char c : s) {
    st = impl_->advance(st, c);
    if (st == kDead) return false;
    // Where it stands stays, in case a later byte is refused.
    impl_->compact({&impl_->current, &st});
  }
  impl_->current = st;
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
void Matcher::begin_work(uint64_t units) {
  impl_->begin(units);
}
uint64_t Matcher::work() const {
  return impl_->work;
}
uint64_t Matcher::cache_epoch() const {
  return impl_->epoch;
}
size_t Matcher::cache_bytes() const {
  return impl_->bytes;
}

uint32_t Matcher::min_bytes_to_end(StateId s) const {
  return s == kDead ? Grammar::kNoEnd : impl_->states[s].min_bytes;
}

std::string Matcher::shortest_completion() const {
  std::string out;
  if (impl_->current == kDead) return out;
  const Impl::State& s = impl_->states[impl_->current];
  if (s.min_bytes == Grammar::kNoEnd) return out;
  for (uint64_t st : s.stacks) {
    if (impl_->stack_min_bytes(st) != s.min_bytes) continue;
    if (pos_of(st) == kAcceptPos) return out;
    impl_->g->spell_shortest(pos_of(st), out);
    for (uint32_t f = frame_of(st); f != 0; f = impl_->frames[f].parent) {
      impl_->g->spell_shortest(impl_->frames[f].ret, out);
    }
    break;
  }
  return out;
}

bool matches(const std::shared_ptr<const Grammar>& g, std::string_view text) {
  Matcher m(g);
  return m.accept(text) && m.can_end();
}

}  // namespace baton::grammar
