// The templates for models whose GGUF carries none (README "Chat templates, tools and
// reasoning"). Both teach the Hermes tool-call markup, which the "hermes" output format reads.
#include "server/api/default_templates.h"

namespace baton::server {

const char* const kDefaultChatmlTemplate = R"TPL({%- if tools %}
{{- '<|im_start|>system\n' }}
{%- if messages[0].role in ['system', 'developer'] %}
{{- messages[0].content + '\n\n' }}
{%- endif %}
{{- '# Tools\n\nYou may call one or more functions to help with the request. Their signatures are inside <tools></tools>:\n<tools>' }}
{%- for tool in tools %}
{{- '\n' + (tool | tojson) }}
{%- endfor %}
{{- '\n</tools>\n\nTo call a function, answer with a JSON object holding its name and arguments inside <tool_call></tool_call> tags:\n<tool_call>\n{"name": <function-name>, "arguments": <arguments-json-object>}\n</tool_call><|im_end|>\n' }}
{%- endif %}
{%- for message in messages %}
{%- if tools and loop.first and message.role in ['system', 'developer'] %}
{%- elif message.role == 'tool' %}
{{- '<|im_start|>user\n<tool_response>\n' + message.content + '\n</tool_response><|im_end|>\n' }}
{%- elif message.role == 'assistant' %}
{{- '<|im_start|>assistant\n' + message.content }}
{%- for call in message.tool_calls or [] %}
{%- if message.content or not loop.first %}
{{- '\n' }}
{%- endif %}
{{- '<tool_call>\n{"name": ' + (call.function.name | tojson) + ', "arguments": ' + (call.function.arguments | tojson) + '}\n</tool_call>' }}
{%- endfor %}
{{- '<|im_end|>\n' }}
{%- else %}
{{- '<|im_start|>' + ('system' if message.role == 'developer' else message.role) + '\n' + message.content + '<|im_end|>\n' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
{{- '<|im_start|>assistant\n' }}
{%- endif %}
)TPL";

const char* const kDefaultTranscriptTemplate =
    R"TPL({%- set names = {'system': 'System', 'developer': 'System', 'assistant': 'Assistant', 'tool': 'Tool'} %}
{%- if tools %}
{{- 'System: You may call functions to help with the request. Their signatures, one per line:\n' }}
{%- for tool in tools %}
{{- (tool | tojson) + '\n' }}
{%- endfor %}
{{- 'System: To call a function, answer with <tool_call>{"name": <function-name>, "arguments": <arguments-json-object>}</tool_call>\n' }}
{%- endif %}
{%- for message in messages %}
{{- names.get(message.role, 'User') + ': ' + message.content }}
{%- for call in message.tool_calls or [] %}
{{- '<tool_call>{"name": ' + (call.function.name | tojson) + ', "arguments": ' + (call.function.arguments | tojson) + '}</tool_call>' }}
{%- endfor %}
{{- '\n' }}
{%- endfor %}
{%- if add_generation_prompt %}
{{- 'Assistant:' }}
{%- endif %}
)TPL";

}  // namespace baton::server
