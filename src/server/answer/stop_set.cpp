#include "server/answer/stop_set.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>

#include "server/errors.h"

namespace baton::server {

namespace {

std::atomic<size_t> g_live{0};

}  // namespace

void check_stop_bytes(const std::vector<std::string>& stops, const std::string& param) {
  size_t total = 0;
  for (const auto& s : stops) {
    if (s.size() > kMaxStopBytes) {
      throw bad_request(fmt::format("a '{}' string is {} bytes; this server takes stop strings "
                                    "of at most {} bytes",
                                    param, s.size(), kMaxStopBytes),
                        param);
    }
    total += s.size();
  }
  if (total > kMaxStopTotalBytes) {
    throw bad_request(fmt::format("the '{}' strings total {} bytes; this server takes at most {} "
                                  "bytes of stop strings per request",
                                  param, total, kMaxStopTotalBytes),
                      param);
  }
}

StopSet::StopSet(std::vector<std::string> stops) : stops_(std::move(stops)) {
  std::erase(stops_, std::string());
  build();
  ++g_live;
}

StopSet::~StopSet() {
  --g_live;
}

size_t StopSet::live() {
  return g_live.load();
}

int32_t StopSet::child(int32_t state, unsigned char c) const {
  const auto s = static_cast<size_t>(state);
  const auto begin = edges_.begin() + nodes_[s].first_edge;
  const auto end = edges_.begin() + nodes_[s + 1].first_edge;
  auto it =
      std::lower_bound(begin, end, c, [](const Edge& e, unsigned char b) { return e.byte < b; });
  return it != end && it->byte == c ? it->to : -1;
}

int32_t StopSet::next(int32_t state, unsigned char c) const {
  // Each failure link leads to a shallower state, and a byte deepens by at most one, so a
  // stream of bytes follows at most as many links as it has bytes.
  for (;;) {
    const int32_t to = child(state, c);
    if (to >= 0) return to;
    if (state == kRoot) return kRoot;
    state = nodes_[static_cast<size_t>(state)].fail;
  }
}

// A trie of the stops with its edges in one sorted array, then the failure links breadth first
// (a node's link is the longest proper suffix of its text that is a trie node) and each node's
// match: its own stop when one ends there, else its link's (the longest stop that is a suffix).
void StopSet::build() {
  struct Build {
    std::vector<std::vector<Edge>> children{1};
    std::vector<Node> nodes{1};
  } b;
  for (size_t i = 0; i < stops_.size(); ++i) {
    int32_t at = kRoot;
    for (unsigned char c : stops_[i]) {
      auto& kids = b.children[static_cast<size_t>(at)];
      auto it = std::find_if(kids.begin(), kids.end(), [c](const Edge& e) { return e.byte == c; });
      if (it != kids.end()) {
        at = it->to;
        continue;
      }
      const auto id = static_cast<int32_t>(b.nodes.size());
      kids.push_back({c, id});
      b.nodes.push_back({b.nodes[static_cast<size_t>(at)].depth + 1, kRoot, -1, 0});
      b.children.emplace_back();
      at = id;
    }
    auto& m = b.nodes[static_cast<size_t>(at)].match;
    if (m < 0) m = static_cast<int32_t>(i);
  }
  nodes_ = std::move(b.nodes);
  for (size_t n = 0; n < nodes_.size(); ++n) {
    auto& kids = b.children[n];
    std::sort(kids.begin(), kids.end(),
              [](const Edge& x, const Edge& y) { return x.byte < y.byte; });
    nodes_[n].first_edge = static_cast<uint32_t>(edges_.size());
    edges_.insert(edges_.end(), kids.begin(), kids.end());
  }
  nodes_.push_back({0, kRoot, -1, static_cast<uint32_t>(edges_.size())});
  std::vector<int32_t> queue{kRoot};
  for (size_t q = 0; q < queue.size(); ++q) {
    const int32_t u = queue[q];
    const Node& nu = nodes_[static_cast<size_t>(u)];
    for (uint32_t e = nu.first_edge; e < nodes_[static_cast<size_t>(u) + 1].first_edge; ++e) {
      const auto [c, v] = edges_[e];
      Node& nv = nodes_[static_cast<size_t>(v)];
      nv.fail = u == kRoot ? kRoot : next(nodes_[static_cast<size_t>(u)].fail, c);
      if (nv.match < 0) nv.match = nodes_[static_cast<size_t>(nv.fail)].match;
      queue.push_back(v);
    }
  }
}

std::shared_ptr<const StopSet> make_stop_set(std::vector<std::string> stops) {
  auto set = std::make_shared<const StopSet>(std::move(stops));
  return set->empty() ? nullptr : set;
}

}  // namespace baton::server
