#pragma once
// Builds a parsed JSON value from nlohmann's SAX events, for either document type. Why not
// nlohmann's own DOM builder: for ordered_json it inserts each member through ordered_map's
// emplace, which first scans the object for the key, so an object of N members costs O(N²)
// (300,000 members in a 3.5 MB request body took 74 s of CPU). Here a member is appended and
// duplicates are found through a per-object index, O(1) amortised; as with nlohmann's builder
// a repeated key keeps its first position and takes the last value.
#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace baton::util {

template <class Json>
class JsonBuilder {
 public:
  explicit JsonBuilder(Json& root) : root_(root) {}

  // Bounds every array at max_items entries: the entry past it calls on_exceeded with the key
  // that holds the array (the latest key read before it opened; empty at the top), which throws
  // to stop the parse. Counted as the array grows, so a huge array costs nothing beyond its limit
  // (nlohmann's parser callback, the obvious alternative, rescans the enclosing container after
  // every nested value: an array of N objects cost O(N^2), 3.5 s for 131072 of them).
  using ArrayLimitHandler = std::function<void(const std::string& key)>;
  void limit_arrays(size_t max_items, ArrayLimitHandler on_exceeded) {
    max_items_ = max_items;
    on_exceeded_ = std::move(on_exceeded);
  }

  bool null() { return put(Json(nullptr)); }
  bool boolean(bool v) { return put(Json(v)); }
  bool number_integer(typename Json::number_integer_t v) { return put(Json(v)); }
  bool number_unsigned(typename Json::number_unsigned_t v) { return put(Json(v)); }
  bool number_float(typename Json::number_float_t v, const typename Json::string_t&) {
    return put(Json(v));
  }
  bool string(typename Json::string_t& v) { return put(Json(std::move(v))); }
  bool binary(typename Json::binary_t& v) { return put(Json::binary(std::move(v))); }
  bool start_object(size_t) { return open(Json::object()); }
  bool start_array(size_t) { return open(Json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(typename Json::string_t& k) {
    if (max_items_ > 0) last_key_ = k;
    Level& top = stack_.back();
    auto& members = *top.value->template get_ptr<typename Json::object_t*>();
    if constexpr (kOrdered) {
      slot_ = &ordered_slot(top, members, std::move(k));
    } else {
      slot_ = &members[std::move(k)];
    }
    return true;
  }
  bool parse_error(size_t, const std::string&, const nlohmann::detail::exception&) {
    errored_ = true;
    return false;
  }
  bool errored() const { return errored_; }

 private:
  // ordered_map is a vector of members: append to it rather than call its scanning emplace.
  static constexpr bool kOrdered = requires(typename Json::object_t & o, std::string k) {
    o.emplace_back(std::move(k), Json());
  };
  static constexpr size_t kIndexFrom = 8;  // smaller objects are scanned

  struct Level {
    Json* value;
    std::unordered_map<std::string, size_t> index;  // ordered objects past kIndexFrom members
    std::string key;                                // of an array, when arrays are bounded
  };

  // ordered_map's operator[] takes a key; its members are a vector underneath.
  static auto& nth(typename Json::object_t& members, size_t i) {
    return *(members.begin() + static_cast<std::ptrdiff_t>(i));
  }

  Json& ordered_slot(Level& top, typename Json::object_t& members, std::string k) {
    if (members.size() < kIndexFrom) {
      for (auto& m : members) {
        if (m.first == k) return m.second;
      }
    } else {
      if (top.index.empty()) {
        for (size_t i = 0; i < members.size(); ++i) top.index.emplace(nth(members, i).first, i);
      }
      auto [it, fresh] = top.index.emplace(k, members.size());
      if (!fresh) return nth(members, it->second).second;
    }
    members.emplace_back(std::move(k), Json());
    return members.back().second;
  }

  // Stores v where the next value goes; returns its address there.
  Json* place(Json v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Json* top = stack_.back().value;
    if (top->is_array()) {
      if (max_items_ > 0 && top->size() >= max_items_) on_exceeded_(stack_.back().key);
      top->template get_ref<typename Json::array_t&>().push_back(std::move(v));
      return &top->template get_ref<typename Json::array_t&>().back();
    }
    *slot_ = std::move(v);
    return slot_;
  }
  bool put(Json v) {
    place(std::move(v));
    return true;
  }
  // The parent does not grow while a child is open, so the child's address stays valid.
  bool open(Json v) {
    const bool array = v.is_array();
    stack_.push_back({place(std::move(v)), {}, {}});
    if (array && max_items_ > 0) stack_.back().key = last_key_;
    return true;
  }
  bool close() {
    stack_.pop_back();
    return true;
  }

  Json& root_;
  std::vector<Level> stack_;
  Json* slot_ = nullptr;  // the member whose value comes next
  bool errored_ = false;
  size_t max_items_ = 0;  // 0: arrays unbounded
  ArrayLimitHandler on_exceeded_;
  std::string last_key_;  // the latest key, while arrays are bounded
};

// Parses `text` as one JSON value into `out` with JsonBuilder; false (and `out` discarded) when
// it is not valid JSON.
template <class Json>
bool build_json(std::string_view text, Json& out) {
  JsonBuilder<Json> builder(out);
  const bool ok = Json::sax_parse(text, &builder, Json::input_format_t::json, true);
  if (ok && !builder.errored()) return true;
  out = Json(Json::value_t::discarded);
  return false;
}

}  // namespace baton::util
