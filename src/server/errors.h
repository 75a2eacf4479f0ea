#pragma once
// OpenAI-style error bodies: {"error": {"message", "type", "param", "code"}}. Handlers throw
// ApiError; the HTTP layer turns it into the status and body, so no handler formats errors itself.
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace baton::constraint {
struct ConstraintError;
}

namespace baton::server {

class ApiError : public std::runtime_error {
 public:
  ApiError(int status, const std::string& message, std::string param = "", std::string type = "",
           std::string code = "");
  int status;
  std::string type;       // invalid_request_error, authentication_error, server_error, ...
  std::string param;      // the offending request field, empty when none
  std::string code;       // machine-readable reason, empty when none
  int retry_after_s = 0;  // > 0: send a Retry-After header (503)
};

// 400 invalid_request_error naming the field.
ApiError bad_request(const std::string& message, const std::string& param = "");
// A structured-output spec that does not compile: 400 naming its field, with its code.
ApiError bad_request(const constraint::ConstraintError& e);
// 503 while the server drains (a shutdown under way): for a refused request and for /health, so
// that clients and load balancers go to another instance. Retry-After 5.
ApiError shutting_down_error();
// The JSON body for an error, as an object (an SSE error event) and as text (a response body).
nlohmann::json error_json(const ApiError& e);
std::string error_body(const ApiError& e);
// Anthropic's error body: {"type": "error", "error": {"type", "message"}}, with Anthropic's
// type names (invalid_request_error, authentication_error, not_found_error, ...).
nlohmann::json anthropic_error_json(const ApiError& e);

// Which API's error shape a route answers in.
enum class ErrorStyle { OpenAI, Anthropic };
std::string error_body(const ApiError& e, ErrorStyle style);

// The default OpenAI error type for a status code.
std::string error_type_for_status(int status);

}  // namespace baton::server
