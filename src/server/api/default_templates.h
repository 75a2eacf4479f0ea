#pragma once
// Chat templates baton uses when the model has none and --chat-template is not given:
//  - ChatML, for vocabularies with <|im_start|>:
//      <|im_start|>system\n{content}<|im_end|>\n ... <|im_start|>assistant\n
//  - a plain transcript otherwise:
//      System: {content}\nUser: {content}\n ... Assistant:
// "developer" counts as system. With tools, a system block lists them and explains the Hermes
// markup (<tool_call>{"name": ..., "arguments": {...}}</tool_call>); history calls are rendered
// that way and tool results as <tool_response> (ChatML) or "Tool:" lines (transcript).
namespace baton::server {

extern const char* const kDefaultChatmlTemplate;
extern const char* const kDefaultTranscriptTemplate;

}  // namespace baton::server
