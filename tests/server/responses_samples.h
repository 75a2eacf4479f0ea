#pragma once
// Responses API request bodies shared by the parser and route tests.
#include <nlohmann/json.hpp>
#include <string>

namespace baton::server::testing {

inline nlohmann::json text_item(const std::string& role, const std::string& text,
                                const char* part = "input_text") {
  return {{"type", "message"}, {"role", role}, {"content", {{{"type", part}, {"text", text}}}}};
}

inline nlohmann::json function_tool(const std::string& name) {
  return {{"type", "function"},
          {"name", name},
          {"description", "Does " + name},
          {"strict", false},
          {"parameters", {{"type", "object"}, {"properties", {{"path", {{"type", "string"}}}}}}}};
}

// What the Codex CLI sends (captured shape): the system prompt as a developer message, items with
// ids, a namespace of MCP functions and web_search beside plain functions, reasoning summaries,
// encrypted reasoning asked back, store false, a prompt cache key and client metadata.
inline nlohmann::json codex_request() {
  nlohmann::json ns_tools = nlohmann::json::array();
  for (const char* n : {"list_dir", "read_file", "grep", "write_file", "stat"}) {
    ns_tools.push_back(function_tool(n));
  }
  nlohmann::json input = {
      text_item("developer", "You are Codex, a coding agent. Follow the user's instructions."),
      {{"type", "message"},
       {"id", "msg_env"},
       {"role", "user"},
       {"content",
        {{{"type", "input_text"},
          {"text", "<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>"}}}}},
      {{"type", "message"},
       {"id", "msg_user"},
       {"role", "user"},
       {"content", {{{"type", "input_text"}, {"text", "List the files."}}}}}};
  nlohmann::json shell = function_tool("shell");
  shell["parameters"] = {{"type", "object"},
                         {"properties",
                          {{"command", {{"type", "array"}, {"items", {{"type", "string"}}}}},
                           {"workdir", {{"type", "string"}}}}},
                         {"required", {"command"}},
                         {"additionalProperties", false}};
  return {{"model", "fake-model"},
          {"input", input},
          {"tools",
           {shell,
            {{"type", "namespace"},
             {"name", "mcp__fs__"},
             {"description", "Tools of the fs MCP server"},
             {"tools", ns_tools}},
            {{"type", "web_search"}, {"external_web_access", false}},
            function_tool("update_plan")}},
          {"tool_choice", "auto"},
          {"parallel_tool_calls", false},
          {"reasoning", {{"summary", "auto"}}},
          {"store", false},
          {"stream", true},
          {"include", {"reasoning.encrypted_content"}},
          {"prompt_cache_key", "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"},
          {"client_metadata", {{"originator", "codex_cli_rs"}, {"session", "s1"}}},
          {"text", {{"verbosity", "medium"}}}};
}

}  // namespace baton::server::testing
