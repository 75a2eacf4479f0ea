#pragma once
// The tools of a POST /v1/responses body as chat completions reads them: function tools, flat or
// inside namespace tools (the model sees one flat list; a namespaced function keeps its own name
// unless another tool has it too), and tool_choice in the Responses spellings. Internal to the
// Responses front end (responses_request.cpp).
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "server/api/request_json.h"
#include "server/api/responses_request.h"

namespace baton::server::responses {

using ojson = RequestJson;

// The function names the model sees, from where the client declared them.
class ToolNames {
 public:
  void add(const std::string& ns, const std::string& name, const std::string& visible) {
    visible_[{ns, name}] = visible;
    if (!ns.empty()) declared_[visible] = {ns, name};
  }
  // The model-visible name of a call the client reports as (namespace, name).
  std::string visible(const std::string& ns, const std::string& name) const {
    auto it = visible_.find({ns, name});
    return it == visible_.end() ? name : it->second;
  }
  // A tool_choice names a function without its namespace.
  std::string visible_for_choice(const std::string& name) const {
    if (visible_.count({"", name}) != 0) return name;
    for (const auto& [declared, shown] : visible_) {
      if (declared.second == name || shown == name) return shown;
    }
    return name;
  }
  const std::map<std::string, DeclaredName>& declared() const { return declared_; }

 private:
  std::map<std::pair<std::string, std::string>, std::string> visible_;
  std::map<std::string, DeclaredName> declared_;
};

struct ChatTools {
  ojson tools = ojson::array();
  std::vector<std::string> origins;  // the Responses path of each chat tool
};

// The chat tools of the body's 'tools'; names records each function's visible name. Tools this
// server cannot run are left out (and logged). Throws ApiError(400) naming the field.
ChatTools read_tools(const ojson& body, ToolNames& names);
// The body's tool_choice in chat-completions form (null when absent); "allowed_tools" narrows
// tools to the listed functions.
ojson read_tool_choice(const ojson& body, ChatTools& tools, const ToolNames& names);

}  // namespace baton::server::responses
