#include "server/api/responses_tools.h"

#include <fmt/format.h>

#include <set>

#include "server/api/json_fields.h"
#include "server/errors.h"
#include "util/log.h"

namespace baton::server::responses {

using fields::find;
using fields::required_string;

namespace {

struct FunctionDecl {
  std::string ns;
  std::string path;  // where the client declared it: tools[i] or tools[i].tools[j]
  const ojson* tool;
};

// Function tools, flat or inside namespace tools; every other type is a tool this server cannot
// run, left out (its type noted in `dropped`).
void collect_function(const ojson& t, const std::string& ns, const std::string& path,
                      std::vector<FunctionDecl>& out, std::set<std::string>& dropped) {
  if (!t.is_object()) throw bad_request(fmt::format("'{}' must be an object", path), path);
  const std::string type = required_string(t, "type", path);
  if (type == "function") {
    required_string(t, "name", path);
    out.push_back({ns, path, &t});
    return;
  }
  if (type == "namespace" && ns.empty()) {
    const std::string name = required_string(t, "name", path);
    const ojson* inner = find(t, "tools");
    if (inner == nullptr || !inner->is_array()) {
      throw bad_request(fmt::format("'{}.tools' must be an array of function tools", path),
                        path + ".tools");
    }
    for (size_t j = 0; j < inner->size(); ++j) {
      collect_function((*inner)[j], name, fmt::format("{}.tools[{}]", path, j), out, dropped);
    }
    return;
  }
  dropped.insert(type.substr(0, 64));
}

// A namespaced function keeps its own name unless another tool has it too; then the namespace
// is put in front, as the client's namespace-qualified name would read.
std::string visible_name(const FunctionDecl& d, const std::map<std::string, int>& uses) {
  const std::string name = (*d.tool)["name"].get<std::string>();
  if (d.ns.empty() || uses.at(name) == 1) return name;
  const char last = d.ns.back();
  const bool joined = last == '_' || last == '.' || last == ':' || last == '-';
  return d.ns + (joined ? "" : "__") + name;
}

}  // namespace

ChatTools read_tools(const ojson& body, ToolNames& names) {
  ChatTools out;
  const ojson* tools = find(body, "tools");
  if (tools == nullptr) return out;
  if (!tools->is_array()) {
    throw bad_request(fmt::format("'tools' must be an array, got {}", fields::type_name(*tools)),
                      "tools");
  }
  std::vector<FunctionDecl> decls;
  std::set<std::string> dropped;
  for (size_t i = 0; i < tools->size(); ++i) {
    collect_function((*tools)[i], "", fmt::format("tools[{}]", i), decls, dropped);
  }
  if (!dropped.empty()) {
    std::string list;
    for (const auto& d : dropped) list += (list.empty() ? "" : ", ") + d;
    log::info(
        "/v1/responses: tools of type {} are left out of the prompt (this server runs "
        "only function tools; the client's own tools work as functions)",
        list);
  }
  std::map<std::string, int> uses;
  for (const auto& d : decls) ++uses[(*d.tool)["name"].get<std::string>()];
  for (const auto& d : decls) {
    const ojson& t = *d.tool;
    const std::string name = visible_name(d, uses);
    names.add(d.ns, t["name"].get<std::string>(), name);
    // In the client's key order: templates print the function as it stands.
    ojson fn = ojson::object();
    for (const auto& [key, v] : t.items()) {
      if (key == "name") {
        fn["name"] = name;
      } else if ((key == "description" || key == "parameters" || key == "strict") && !v.is_null()) {
        fn[key] = v;
      }
    }
    out.tools.push_back({{"type", "function"}, {"function", std::move(fn)}});
    out.origins.push_back(d.path);
  }
  return out;
}

namespace {

const char* kChoiceHelp =
    "\"auto\", \"none\", \"required\" or {\"type\": \"function\", \"name\": ...}";

// tool_choice "allowed_tools": only the listed functions stay in the prompt.
ojson allowed_tools_choice(const ojson& tc, ChatTools& tools) {
  const std::string mode = required_string(tc, "mode", "tool_choice");
  if (mode != "auto" && mode != "required") {
    throw bad_request("'tool_choice.mode' must be \"auto\" or \"required\"", "tool_choice.mode");
  }
  const ojson* list = find(tc, "tools");
  if (list == nullptr || !list->is_array()) {
    throw bad_request(
        "'tool_choice.tools' must be an array of {\"type\": \"function\", "
        "\"name\": ...}",
        "tool_choice.tools");
  }
  std::set<std::string> allowed;
  for (const auto& t : *list) {
    if (t.is_object() && t.value("type", "") == "function" && t.contains("name") &&
        t["name"].is_string()) {
      allowed.insert(t["name"].get<std::string>());
    }
  }
  ChatTools kept;
  for (size_t k = 0; k < tools.tools.size(); ++k) {
    if (allowed.count(tools.tools[k]["function"]["name"].get<std::string>()) == 0) continue;
    kept.tools.push_back(tools.tools[k]);
    kept.origins.push_back(tools.origins[k]);
  }
  tools = std::move(kept);
  return mode;
}

}  // namespace

ojson read_tool_choice(const ojson& body, ChatTools& tools, const ToolNames& names) {
  const ojson* tc = find(body, "tool_choice");
  if (tc == nullptr) return ojson();
  if (tc->is_string()) {
    const auto& s = tc->get_ref<const std::string&>();
    if (s == "auto" || s == "none" || s == "required") return *tc;
    throw bad_request(
        fmt::format("'tool_choice' '{}' is not one of {}", s.substr(0, 64), kChoiceHelp),
        "tool_choice");
  }
  if (!tc->is_object()) {
    throw bad_request(
        fmt::format("'tool_choice' must be {}, got {}", kChoiceHelp, fields::type_name(*tc)),
        "tool_choice");
  }
  const std::string type = required_string(*tc, "type", "tool_choice");
  if (type == "function") {
    const std::string name = required_string(*tc, "name", "tool_choice");
    return {{"type", "function"}, {"function", {{"name", names.visible_for_choice(name)}}}};
  }
  if (type == "allowed_tools") return allowed_tools_choice(*tc, tools);
  throw bad_request(fmt::format("'tool_choice' names a '{}' tool, which this server cannot run; "
                                "use {}",
                                type.substr(0, 64), kChoiceHelp),
                    "tool_choice");
}

}  // namespace baton::server::responses
