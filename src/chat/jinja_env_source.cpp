// The Python half of the chat-template renderer, compiled into the binary so that nothing from the
// source tree is needed at run time. It builds the Jinja2 environment exactly as Hugging Face
// `transformers` does (`_compile_jinja_template` in transformers/utils/chat_template_utils.py):
// ImmutableSandboxedEnvironment with trim_blocks, lstrip_blocks and loopcontrols, a
// `{% generation %}` tag that renders its body, `tojson` as json.dumps, `raise_exception` and
// `strftime_now`. The functions never raise: they return (ok, value or one-line message), so the
// C++ side does not have to format Python exceptions itself.
//
// Budgets: a template is code from a model file. Its output is produced piece by piece
// (Template.generate) and stopped past a byte budget; the operations that could build a huge
// value in one C call (repeating a string or list, a power of a big int, a padded format) are
// checked against the same budget before they run. Time is bounded from the C++ side, which
// raises RenderTimeout in the rendering thread (chat_template.cpp).
#include "chat/python_runtime.h"

namespace baton::chat::detail {

const char* const kJinjaEnvSource = R"py(
import datetime
import json
import re
import threading

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


class RenderTimeout(BaseException):
    # Raised into the rendering thread by the watchdog; BaseException, so a template's own
    # error handling (there is none in Jinja, but filters catch Exception) never swallows it.
    pass


class RenderBudgetExceeded(Exception):
    pass


_budget = threading.local()  # max_bytes of the rendering running on this thread


def _check_size(n):
    limit = getattr(_budget, "max_bytes", 0)
    if limit and n > limit:
        raise RenderBudgetExceeded("the rendering would build a value of %d bytes or more, over "
                                   "its budget of %d" % (n, limit))


# A width or precision in a %-format or a str.format spec: "%9999999999d", "{:>9999999999}",
# "{:.9999999999f}". Given as an argument instead ("%*d", "{:>{}}"), the arguments are checked.
_SPEC = re.compile(r"[%:](?:.?[<>^=])?[-+ #0]*(\d*)[,_]?(?:\.(\d+))?")
_WIDTH_FROM_ARGS = re.compile(r"%[-+ #0]*\*|%[-+ #0]*\d*\.\*|\{[^{}]*:[^{}]*\{")
_WIDTH_METHODS = frozenset(["center", "ljust", "rjust", "zfill", "expandtabs"])


def _check_format(fmt, args=()):
    if not isinstance(fmt, str):
        return
    for m in _SPEC.finditer(fmt):
        for digits in m.groups():
            if digits and len(digits) > 6:
                _check_size(int(digits))
    if _WIDTH_FROM_ARGS.search(fmt):
        if isinstance(args, dict):
            args = list(args.values())
        elif not isinstance(args, (tuple, list)):
            args = [args]
        for a in args:
            if isinstance(a, int):
                _check_size(a)


class _BudgetedEnvironment(ImmutableSandboxedEnvironment):
    intercepted_binops = frozenset(["*", "**", "%"])

    def call_binop(self, context, operator, left, right):
        if operator == "*":
            for seq, n in ((left, right), (right, left)):
                if isinstance(seq, (str, bytes, list, tuple)) and isinstance(n, int):
                    _check_size(len(seq) * n)
            return left * right
        if operator == "**":
            if isinstance(left, int) and isinstance(right, int) and right > 0 and abs(left) > 1:
                _check_size(left.bit_length() * right // 8)
            return left ** right
        _check_format(left, right)
        return left % right

    def call(self, __context, __obj, *args, **kwargs):
        # str.center(10**10) and the like allocate their whole width in one call.
        if (isinstance(getattr(__obj, "__self__", None), (str, bytes))
                and getattr(__obj, "__name__", "") in _WIDTH_METHODS):
            for a in list(args) + list(kwargs.values()):
                if isinstance(a, int):
                    _check_size(a)
        return super().call(__context, __obj, *args, **kwargs)

    def wrap_str_format(self, value):
        # The sandbox hands templates a wrapper of str.format at attribute access, so the format
        # string and its arguments are checked around that wrapper.
        wrapped = super().wrap_str_format(value)
        if wrapped is None:
            return None

        def checked(*args, **kwargs):
            values = list(args) + list(kwargs.values())
            if value.__name__ == "format_map" and len(args) == 1 and isinstance(args[0], dict):
                values = list(args[0].values())
            _check_format(value.__self__, values)
            return wrapped(*args, **kwargs)

        return checked


def _raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def _tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    # Not Jinja's own tojson, which escapes HTML characters.
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


_env = _BudgetedEnvironment(trim_blocks=True, lstrip_blocks=True,
                            extensions=[_Generation, jinja2.ext.loopcontrols])
_env.filters["tojson"] = _tojson


def _checked_filter(name, width_arg):
    inner = _env.filters[name]
    # A filter Jinja passes a context or environment to (slice) takes it as its first argument;
    # the wrapper must carry the same mark, or Jinja would not pass it.
    passed = getattr(inner, "jinja_pass_arg", None)
    first = 1 if passed is not None else 0

    def checked(*args, **kwargs):
        width = first + width_arg
        if len(args) > width and isinstance(args[width], int):
            _check_size(args[width])
        if name == "format" and len(args) > first:
            _check_format(args[first], kwargs or args[first + 1:])
        return inner(*args, **kwargs)

    if passed is not None:
        checked.jinja_pass_arg = passed
    return checked


# batch and slice pad with fill values up to their count.
for _name, _width_arg in (("center", 1), ("indent", 1), ("batch", 1), ("slice", 1), ("format", 99)):
    _env.filters[_name] = _checked_filter(_name, _width_arg)
_env.globals["raise_exception"] = _raise_exception


def _describe(exc):
    text = type(exc).__name__ + ": " + str(exc)
    if isinstance(exc, jinja2.exceptions.TemplateSyntaxError) and exc.lineno:
        text += " (line %d)" % exc.lineno
    return " ".join(text.split("\n"))


# Jinja folds constant expressions while it compiles ("{{ 'a'|center(10**10) }}" runs the filter
# then). A fold over this size fails the check, and Jinja leaves that expression to the rendering,
# where the rendering's own budget applies.
_COMPILE_FOLD_BYTES = 1 << 16


def compile_template(source):
    _budget.max_bytes = _COMPILE_FOLD_BYTES
    try:
        return True, _env.from_string(source.decode("utf-8"))
    except BaseException as exc:
        return False, _describe(exc)
    finally:
        _budget.max_bytes = 0


def render(template, context_json, now_iso, max_bytes):
    _budget.max_bytes = max_bytes
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
        # Rendered from a dict, not **kwargs, so that a key such as "self" is just a variable;
        # piece by piece, so that an endless output stops at the budget.
        pieces = []
        size = 0
        for piece in template.generate(variables):
            size += len(piece)
            _check_size(size)
            pieces.append(piece)
        return True, "".join(pieces).encode("utf-8")
    except BaseException as exc:
        return False, _describe(exc)
    finally:
        _budget.max_bytes = 0
)py";

}  // namespace baton::chat::detail
