#pragma once
// A request's stop strings, compiled once into an Aho–Corasick automaton that every choice of
// the request shares (immutable after construction, so any number of threads may read it). Each
// choice keeps only its own state (a StopMatcher): with n = 64 choices, the strings and the
// automaton exist once, and each matcher advances in O(1) amortised per byte of text whatever
// the number and length of the stops.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace baton::server {

// Bounds on a request's stop strings (OpenAI's `stop`, Anthropic's `stop_sequences`). OpenAI
// documents up to 4 strings and no byte limit; these are far above any real stop string and
// keep a request's matching state small.
inline constexpr size_t kMaxStopBytes = 8192;        // one stop string
inline constexpr size_t kMaxStopTotalBytes = 16384;  // all of a request's stop strings

// 400 naming `param` when a stop string or their total is over the bounds above.
void check_stop_bytes(const std::vector<std::string>& stops, const std::string& param);

class StopSet {
 public:
  // Empty strings are dropped.
  explicit StopSet(std::vector<std::string> stops);
  ~StopSet();
  StopSet(const StopSet&) = delete;
  StopSet& operator=(const StopSet&) = delete;

  bool empty() const { return stops_.empty(); }
  // The root state: nothing of any stop seen.
  static constexpr int32_t kRoot = 0;
  // The state after `state` reads byte `c`.
  int32_t next(int32_t state, unsigned char c) const;
  // Bytes of the text that end at `state` and may still become a stop: the text a matcher
  // holds back.
  int32_t depth(int32_t state) const { return nodes_[static_cast<size_t>(state)].depth; }
  // The longest stop string that ends at `state`, or -1 when none does.
  int32_t match(int32_t state) const { return nodes_[static_cast<size_t>(state)].match; }
  const std::string& stop(int32_t index) const { return stops_[static_cast<size_t>(index)]; }

  // How many sets are alive in the process: requests build one each, whatever their n.
  static size_t live();

 private:
  struct Node {
    int32_t depth = 0;
    int32_t fail = 0;
    int32_t match = -1;       // index into stops_
    uint32_t first_edge = 0;  // this node's children: edges_[first_edge, next node's first_edge)
  };
  struct Edge {
    unsigned char byte;
    int32_t to;
  };
  int32_t child(int32_t state, unsigned char c) const;
  void build();

  std::vector<std::string> stops_;
  std::vector<Node> nodes_;  // plus one sentinel at the end, for the last node's edge range
  std::vector<Edge> edges_;  // sorted by byte within each node
};

// nullptr when no non-empty stop string is given.
std::shared_ptr<const StopSet> make_stop_set(std::vector<std::string> stops);

}  // namespace baton::server
