#pragma once
// The embedded CPython interpreter that runs Jinja2 (see chat_template.h). Internal to src/chat.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

namespace baton::chat::detail {

extern const char* const kJinjaEnvSource;  // jinja_env_source.cpp

// Holds the interpreter's global lock for its scope, starting the interpreter (once per process)
// first. Throws TemplateError when it cannot start (e.g. python3-jinja2 is not installed).
class GilScope {
 public:
  GilScope();
  ~GilScope();
  GilScope(const GilScope&) = delete;
  GilScope& operator=(const GilScope&) = delete;

 private:
  PyGILState_STATE state_;
};

// Functions of the embedded Python module, borrowed references valid for the process lifetime.
// Call only under a GilScope.
// compile_template(source: bytes) -> (ok, template | message)
PyObject* compile_function();
// render(template, context: bytes, now: bytes, max_chars: int) -> (ok, bytes | message)
PyObject* render_function();
// The exception class a watchdog raises into a rendering that ran out of time.
PyObject* timeout_exception();

}  // namespace baton::chat::detail
