// Starts the embedded interpreter once per process, on first use, and keeps it to the end of the
// process (never finalised: templates may be rendered until exit, and finalising with other
// threads around is fragile). It runs Debian's libpython3.11 with Debian's python3-jinja2.
//
// Isolation: the interpreter is configured in isolated mode (PyConfig_InitIsolatedConfig) with
// its module search path set explicitly to Debian's standard library and /usr/lib/python3/
// dist-packages, because otherwise PYTHONHOME / PYTHONPATH in the user's environment (a pyenv or
// a virtualenv of another Python version, common on developer machines) would send it to another
// standard library or another jinja2, and the rendering would no longer be the one we test. For
// the same reason site is not imported (no /usr/local or user site-packages). It installs no
// signal handlers (the server owns SIGINT/SIGTERM) and writes no bytecode.
#include "chat/python_runtime.h"

#include <mutex>
#include <string>

#include "chat/chat_template.h"

#ifndef BATON_PYTHON_PREFIX
#error "BATON_PYTHON_PREFIX (the prefix of Debian's python3.11, from pkg-config) must be defined"
#endif

namespace baton::chat::detail {
namespace {

std::once_flag g_once;
std::string g_init_error;  // non-empty when the interpreter or jinja2 failed to start
PyObject* g_compile = nullptr;
PyObject* g_render = nullptr;
PyObject* g_timeout = nullptr;

#define BATON_STR2(x) #x
#define BATON_STR(x) BATON_STR2(x)
constexpr const char* kPythonVersion = BATON_STR(PY_MAJOR_VERSION) "." BATON_STR(PY_MINOR_VERSION);

std::string status_message(const PyStatus& st) {
  std::string msg = st.err_msg ? st.err_msg : "unknown error";
  if (st.func) msg = std::string(st.func) + ": " + msg;
  return msg;
}

// Appends a UTF-8 path to a PyConfig wide-string list (decoded the way Python decodes paths).
bool append_path(PyWideStringList* list, const std::string& path) {
  wchar_t* wide = Py_DecodeLocale(path.c_str(), nullptr);
  if (wide == nullptr) return false;
  PyStatus st = PyWideStringList_Append(list, wide);
  PyMem_RawFree(wide);
  return !PyStatus_Exception(st);
}

// With the GIL held: the current Python exception as one line, cleared.
std::string fetch_error() {
  PyObject *type = nullptr, *value = nullptr, *tb = nullptr;
  PyErr_Fetch(&type, &value, &tb);
  std::string msg = "unknown Python error";
  if (value != nullptr) {
    if (PyObject* s = PyObject_Str(value)) {
      if (const char* c = PyUnicode_AsUTF8(s)) msg = c;
      Py_DECREF(s);
    }
  }
  if (type != nullptr) {
    msg = std::string(reinterpret_cast<PyTypeObject*>(type)->tp_name) + ": " + msg;
  }
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
  PyErr_Clear();
  for (char& c : msg) {
    if (c == '\n') c = ' ';
  }
  return msg;
}

// With the GIL held (the interpreter just started): import jinja2 and build the environment.
void load_module() {
  PyObject* code = Py_CompileString(kJinjaEnvSource, "<baton chat env>", Py_file_input);
  PyObject* module = code ? PyImport_ExecCodeModule("baton_chat_env", code) : nullptr;
  Py_XDECREF(code);
  if (module == nullptr) {
    g_init_error = "cannot load Jinja2 (Debian's python3-jinja2 is needed): " + fetch_error();
    return;
  }
  g_compile = PyObject_GetAttrString(module, "compile_template");
  g_render = PyObject_GetAttrString(module, "render");
  g_timeout = PyObject_GetAttrString(module, "RenderTimeout");
  Py_DECREF(module);  // sys.modules keeps it
  if (g_compile == nullptr || g_render == nullptr || g_timeout == nullptr) {
    g_init_error = fetch_error();
  }
}

void start_interpreter() {
  if (Py_IsInitialized()) {
    g_init_error = "a Python interpreter is already running in this process";
    return;
  }
  PyPreConfig pre;
  PyPreConfig_InitIsolatedConfig(&pre);
  pre.utf8_mode = 1;  // paths and strings are UTF-8 whatever the locale; the locale is untouched
  PyStatus st = Py_PreInitialize(&pre);
  if (PyStatus_Exception(st)) {
    g_init_error = "cannot start Python: " + status_message(st);
    return;
  }
  PyConfig config;
  PyConfig_InitIsolatedConfig(&config);
  config.install_signal_handlers = 0;
  config.write_bytecode = 0;
  config.site_import = 0;
  config.pathconfig_warnings = 0;
  const std::string prefix = BATON_PYTHON_PREFIX;
  const std::string stdlib = prefix + "/lib/python" + kPythonVersion;
  st = PyConfig_SetBytesString(&config, &config.home, prefix.c_str());
  config.module_search_paths_set = 1;
  bool ok = !PyStatus_Exception(st) && append_path(&config.module_search_paths, stdlib) &&
            append_path(&config.module_search_paths, stdlib + "/lib-dynload") &&
            append_path(&config.module_search_paths, prefix + "/lib/python3/dist-packages");
  if (ok) {
    st = Py_InitializeFromConfig(&config);
    ok = !PyStatus_Exception(st);
  }
  PyConfig_Clear(&config);
  if (!ok) {
    g_init_error = "cannot start Python: " + status_message(st);
    return;
  }
  load_module();
  // Py_InitializeFromConfig left this thread holding the GIL; every use takes it with
  // PyGILState_Ensure instead, from whichever thread.
  PyEval_SaveThread();
}

}  // namespace

GilScope::GilScope() {
  std::call_once(g_once, start_interpreter);
  if (!g_init_error.empty()) throw TemplateError(g_init_error);
  state_ = PyGILState_Ensure();
}

GilScope::~GilScope() {
  PyGILState_Release(state_);
}

PyObject* compile_function() {
  return g_compile;
}
PyObject* render_function() {
  return g_render;
}
PyObject* timeout_exception() {
  return g_timeout;
}

}  // namespace baton::chat::detail
