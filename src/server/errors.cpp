#include "server/errors.h"

#include <nlohmann/json.hpp>

#include "constraint/constraint_compiler.h"

namespace baton::server {

std::string error_type_for_status(int status) {
  switch (status) {
    case 401:
      return "authentication_error";
    case 404:
      return "not_found_error";
    case 503:
      return "overloaded_error";
    default:
      return status >= 500 ? "server_error" : "invalid_request_error";
  }
}

ApiError::ApiError(int status_, const std::string& message, std::string param_, std::string type_,
                   std::string code_)
    : std::runtime_error(message),
      status(status_),
      type(type_.empty() ? error_type_for_status(status_) : std::move(type_)),
      param(std::move(param_)),
      code(std::move(code_)) {}

ApiError bad_request(const std::string& message, const std::string& param) {
  return ApiError(400, message, param);
}

ApiError shutting_down_error() {
  ApiError e(503, "the server is shutting down; retry on another instance", "", "",
             "shutting_down");
  e.retry_after_s = 5;
  return e;
}

ApiError bad_request(const constraint::ConstraintError& e) {
  return ApiError(400, e.what(), e.field, "invalid_request_error", e.code);
}

nlohmann::json error_json(const ApiError& e) {
  nlohmann::json err = {{"message", e.what()}, {"type", e.type}};
  err["param"] = e.param.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.param);
  err["code"] = e.code.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.code);
  return nlohmann::json{{"error", err}};
}

std::string error_body(const ApiError& e) {
  // Messages may quote client bytes (a path, a header); invalid UTF-8 becomes U+FFFD instead of
  // throwing.
  return error_json(e).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace {

std::string anthropic_type_for_status(int status) {
  switch (status) {
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 503:
    case 529:
      return "overloaded_error";
    default:
      return status >= 500 ? "api_error" : "invalid_request_error";
  }
}

}  // namespace

nlohmann::json anthropic_error_json(const ApiError& e) {
  return {{"type", "error"},
          {"error", {{"type", anthropic_type_for_status(e.status)}, {"message", e.what()}}}};
}

std::string error_body(const ApiError& e, ErrorStyle style) {
  if (style == ErrorStyle::OpenAI) return error_body(e);
  return anthropic_error_json(e).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace baton::server
