#include "server/api/request_json.h"

#include <fmt/format.h>

#include <string>

#include "server/errors.h"
#include "util/json_builder.h"
#include "util/json_depth.h"

namespace baton::server {

RequestJson parse_json_object(const std::string& body, size_t max_array_items, int32_t ctx) {
  if (!util::json_nesting_within(body)) {
    throw bad_request(fmt::format("request body nests deeper than {} levels", util::kMaxJsonDepth));
  }
  RequestJson j;
  // Arrays are bounded while they are parsed: a body cannot make the server build a huge one.
  util::JsonBuilder<RequestJson> dom(j);
  dom.limit_arrays(max_array_items, [&](const std::string& key) {
    throw ApiError(400,
                   fmt::format("'{}' has more than {} entries; the context (--ctx) holds {} tokens",
                               key.substr(0, 64), max_array_items, ctx),
                   key.substr(0, 64), "invalid_request_error", "context_length_exceeded");
  });
  bool ok = RequestJson::sax_parse(body, &dom, RequestJson::input_format_t::json, true);
  if (!ok || dom.errored()) throw bad_request("request body is not valid JSON");
  if (!j.is_object()) throw bad_request("request body must be a JSON object");
  return j;
}

}  // namespace baton::server
