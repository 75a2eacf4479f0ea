#include "scripted/script.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace baton::agents {
namespace {

std::vector<std::string> strings(const nlohmann::json& rule, const char* key) {
  std::vector<std::string> out;
  if (!rule.contains(key)) return out;
  const auto& v = rule.at(key);
  if (v.is_string()) return {v.get<std::string>()};
  for (const auto& s : v) out.push_back(s.get<std::string>());
  return out;
}

}  // namespace

std::unique_ptr<Script> Script::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(fmt::format("cannot read the script {}", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return parse(ss.str(), path);
}

std::unique_ptr<Script> Script::parse(const std::string& json_text, const std::string& origin) {
  auto s = std::make_unique<Script>();
  try {
    auto j = nlohmann::json::parse(json_text);
    s->token_delay_ms_ = j.value("token_delay_ms", 3);
    int index = 0;
    for (const auto& r : j.at("rules")) {
      Rule rule;
      rule.name = r.value("name", std::to_string(index++));
      if (r.contains("request")) rule.request = r.at("request").get<int64_t>();
      rule.contains = strings(r, "contains");
      rule.not_contains = strings(r, "not_contains");
      rule.times_left = r.value("times", int64_t{-1});
      rule.reply = r.at("reply").get<std::string>();
      if (r.contains("token_delay_ms")) rule.token_delay_ms = r.at("token_delay_ms").get<int32_t>();
      const std::string finish = r.value("finish", "stop");
      if (finish != "stop" && finish != "length") {
        throw std::runtime_error(fmt::format("rule {}: finish must be stop or length", rule.name));
      }
      rule.length = finish == "length";
      s->rules_.push_back(std::move(rule));
    }
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("script {}: {}", origin, e.what()));
  }
  return s;
}

Reply Script::match(const std::string& prompt, int64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& r : rules_) {
    if (r.times_left == 0) continue;
    if (r.request && *r.request != n) continue;
    bool ok = true;
    for (const auto& s : r.contains) ok = ok && prompt.find(s) != std::string::npos;
    for (const auto& s : r.not_contains) ok = ok && prompt.find(s) == std::string::npos;
    if (!ok) continue;
    if (r.times_left > 0) --r.times_left;
    return {r.name, r.reply, r.token_delay_ms.value_or(token_delay_ms_), r.length};
  }
  // Readable in the client's output, so a failing test says which request went unscripted.
  return {"", fmt::format("[scripted server: no rule matched request {}]", n), token_delay_ms_,
          false};
}

}  // namespace baton::agents
