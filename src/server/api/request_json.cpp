#include "server/api/request_json.h"

#include <fmt/format.h>

#include <vector>

#include "server/errors.h"
#include "util/json_builder.h"
#include "util/json_depth.h"

namespace baton::server {

namespace {

// Builds the document (util::JsonBuilder) while counting the entries of every open array, and
// stops at the first array past the limit, naming the key that holds it. Not nlohmann's parser
// callback: after every nested value it rescans the enclosing container for discarded entries,
// so an array of N objects cost O(N²) (3.5 s for 131072 of them).
class BoundedDom {
 public:
  BoundedDom(RequestJson& out, size_t max_items, int32_t ctx)
      : dom_(out), max_(max_items), ctx_(ctx) {}

  bool null() { return count(), dom_.null(); }
  bool boolean(bool v) { return count(), dom_.boolean(v); }
  bool number_integer(RequestJson::number_integer_t v) { return count(), dom_.number_integer(v); }
  bool number_unsigned(RequestJson::number_unsigned_t v) {
    return count(), dom_.number_unsigned(v);
  }
  bool number_float(RequestJson::number_float_t v, const RequestJson::string_t& s) {
    return count(), dom_.number_float(v, s);
  }
  bool string(RequestJson::string_t& v) { return count(), dom_.string(v); }
  bool binary(RequestJson::binary_t& v) { return count(), dom_.binary(v); }
  bool start_object(size_t n) {
    count();
    stack_.push_back({false, 0, {}});
    return dom_.start_object(n);
  }
  bool key(RequestJson::string_t& k) {
    last_key_ = k;
    return dom_.key(k);
  }
  bool end_object() {
    if (!stack_.empty()) stack_.pop_back();
    return dom_.end_object();
  }
  bool start_array(size_t n) {
    count();
    stack_.push_back({true, 0, last_key_});
    return dom_.start_array(n);
  }
  bool end_array() {
    if (!stack_.empty()) stack_.pop_back();
    return dom_.end_array();
  }
  bool parse_error(size_t pos, const std::string& token, const nlohmann::detail::exception& e) {
    return dom_.parse_error(pos, token, e);
  }
  bool errored() const { return dom_.errored(); }

 private:
  struct Level {
    bool array;
    size_t items;
    std::string key;
  };
  void count() {
    if (max_ == 0 || stack_.empty() || !stack_.back().array) return;
    if (++stack_.back().items <= max_) return;
    const std::string& key = stack_.back().key;
    throw ApiError(400,
                   fmt::format("'{}' has more than {} entries; the context (--ctx) holds {} "
                               "tokens",
                               key.substr(0, 64), max_, ctx_),
                   key.substr(0, 64), "invalid_request_error", "context_length_exceeded");
  }

  util::JsonBuilder<RequestJson> dom_;
  size_t max_;
  int32_t ctx_;
  std::string last_key_;
  std::vector<Level> stack_;
};

}  // namespace

RequestJson parse_json_object(const std::string& body, size_t max_array_items, int32_t ctx) {
  if (!util::json_nesting_within(body)) {
    throw bad_request(fmt::format("request body nests deeper than {} levels", util::kMaxJsonDepth));
  }
  RequestJson j;
  BoundedDom dom(j, max_array_items, ctx);
  bool ok = RequestJson::sax_parse(body, &dom, RequestJson::input_format_t::json, true);
  if (!ok || dom.errored()) throw bad_request("request body is not valid JSON");
  if (!j.is_object()) throw bad_request("request body must be a JSON object");
  return j;
}

}  // namespace baton::server
