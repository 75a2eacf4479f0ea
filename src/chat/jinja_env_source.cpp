// The Python half of the chat-template renderer, compiled into the binary so that nothing from the
// source tree is needed at run time. It builds the Jinja2 environment exactly as Hugging Face
// `transformers` does (`_compile_jinja_template` in transformers/utils/chat_template_utils.py):
// ImmutableSandboxedEnvironment with trim_blocks, lstrip_blocks and loopcontrols, a
// `{% generation %}` tag that renders its body, `tojson` as json.dumps, `raise_exception` and
// `strftime_now`. The functions never raise: they return (ok, value or one-line message), so the
// C++ side does not have to format Python exceptions itself.
#include "chat/python_runtime.h"

namespace baton::chat::detail {

const char* const kJinjaEnvSource = R"py(
import datetime
import json

import jinja2
import jinja2.exceptions
import jinja2.ext
import jinja2.nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment


class _Generation(jinja2.ext.Extension):
    # transformers' AssistantTracker outside of assistant-mask tracking: the body, as is.
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        call = self.call_method("_render_body")
        return jinja2.nodes.CallBlock(call, [], [], body).set_lineno(lineno)

    def _render_body(self, caller):
        return caller()


def _raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def _tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    # Not Jinja's own tojson, which escapes HTML characters.
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


_env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                     extensions=[_Generation, jinja2.ext.loopcontrols])
_env.filters["tojson"] = _tojson
_env.globals["raise_exception"] = _raise_exception


def _describe(exc):
    text = type(exc).__name__ + ": " + str(exc)
    if isinstance(exc, jinja2.exceptions.TemplateSyntaxError) and exc.lineno:
        text += " (line %d)" % exc.lineno
    return " ".join(text.split("\n"))


def compile_template(source):
    try:
        return True, _env.from_string(source.decode("utf-8"))
    except BaseException as exc:
        return False, _describe(exc)


def render(template, context_json, now_iso):
    try:
        try:
            now = datetime.datetime.fromisoformat(now_iso.decode("utf-8"))
        except ValueError:
            raise ValueError("invalid time %r: give ISO 8601, e.g. 2024-07-26T12:00:00"
                             % now_iso.decode("utf-8", "replace")) from None
        context = json.loads(context_json.decode("utf-8"))
        if not isinstance(context, dict):
            raise TypeError("the context must be a JSON object")
        # strftime_now is a global in transformers, so a context key of that name overrides it.
        variables = {"strftime_now": lambda fmt: now.strftime(fmt)}
        variables.update(context)
        # Rendered from a dict, not **kwargs, so that a key such as "self" is just a variable.
        return True, template.render(variables).encode("utf-8")
    except BaseException as exc:
        return False, _describe(exc)
)py";

}  // namespace baton::chat::detail
