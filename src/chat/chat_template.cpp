// ChatTemplate over the embedded Jinja2 (python_runtime.h). Calls pass bytes into Python and get
// bytes or a one-line message back; all Python objects are touched only under a GilScope.
#include "chat/chat_template.h"

#include <fmt/format.h>

#include <map>
#include <mutex>

#include "chat/python_runtime.h"
#include "chat/render_watchdog.h"

namespace baton::chat {

struct ChatTemplate::Compiled {
  std::string source;
  PyObject* template_ = nullptr;  // a jinja2.Template, owned
  ~Compiled() {
    if (template_ == nullptr) return;
    detail::GilScope gil;
    Py_DECREF(template_);
  }
};

namespace {

// Calls fn(args...) and unpacks its (ok, value) result: on success returns the new reference to
// value; on a template error throws TemplateError with its message. Needs the GIL.
PyObject* call_checked(PyObject* fn, PyObject* args) {
  if (args == nullptr) throw TemplateError("out of memory passing the template's arguments");
  PyObject* result = PyObject_CallObject(fn, args);
  Py_DECREF(args);
  if (result == nullptr || !PyTuple_Check(result) || PyTuple_GET_SIZE(result) != 2) {
    PyErr_Clear();
    Py_XDECREF(result);
    throw TemplateError("internal error: the Jinja2 environment returned an unexpected value");
  }
  const bool ok = PyObject_IsTrue(PyTuple_GET_ITEM(result, 0)) == 1;
  PyObject* value = PyTuple_GET_ITEM(result, 1);
  Py_INCREF(value);
  Py_DECREF(result);
  if (ok) return value;
  std::string msg = "unknown template error";
  if (const char* c = PyUnicode_Check(value) ? PyUnicode_AsUTF8(value) : nullptr) msg = c;
  PyErr_Clear();
  Py_DECREF(value);
  throw TemplateError(msg);
}

// Compiled templates by source. The sources are a model's templates and --chat-template files,
// a handful per process, so the cache is only bounded against misuse.
constexpr size_t kCacheLimit = 64;
// Never destroyed: releasing its templates at exit would take the GIL, which a thread still
// rendering at exit may hold.
std::mutex g_cache_mutex;
using Cache = std::map<std::string, std::shared_ptr<const ChatTemplate::Compiled>, std::less<>>;
Cache& g_cache = *new Cache;

}  // namespace

ChatTemplate ChatTemplate::from_text(std::string source) {
  {
    std::lock_guard lock(g_cache_mutex);
    if (auto it = g_cache.find(source); it != g_cache.end()) return ChatTemplate(it->second);
  }
  auto compiled = std::make_shared<Compiled>();
  {
    detail::GilScope gil;
    PyObject* args = Py_BuildValue("(y#)", source.data(), static_cast<Py_ssize_t>(source.size()));
    compiled->template_ = call_checked(detail::compile_function(), args);
  }
  compiled->source = std::move(source);
  std::lock_guard lock(g_cache_mutex);
  if (g_cache.size() >= kCacheLimit) g_cache.clear();  // the live ChatTemplates keep theirs
  // Two threads compiling the same text at once both succeed; the first one stored wins.
  auto [it, inserted] = g_cache.emplace(compiled->source, compiled);
  return ChatTemplate(it->second);
}

std::string ChatTemplate::render(const nlohmann::ordered_json& context,
                                 const RenderOptions& options) const {
  std::string text;
  try {
    text = context.dump();
  } catch (const nlohmann::json::exception& e) {
    throw TemplateError(std::string("the context cannot be written as JSON: ") + e.what());
  }
  return render_json(text, options);
}

std::string ChatTemplate::render_json(std::string_view context_json,
                                      const RenderOptions& options) const {
  const size_t max_chars = options.max_output_chars > 0 ? options.max_output_chars
                                                        : 8 * context_json.size() + (1u << 20);
  detail::GilScope gil;
  PyObject* args = Py_BuildValue("(Oy#y#n)", compiled_->template_, context_json.data(),
                                 static_cast<Py_ssize_t>(context_json.size()), options.now.data(),
                                 static_cast<Py_ssize_t>(options.now.size()),
                                 static_cast<Py_ssize_t>(max_chars));
  detail::RenderDeadline deadline(options.time_limit);
  PyObject* bytes = nullptr;
  try {
    bytes = call_checked(detail::render_function(), args);
  } catch (const TemplateError& e) {
    if (deadline.fired()) {
      throw TemplateBudgetError(
          fmt::format("the template ran past its time limit of {} ms", options.time_limit.count()));
    }
    constexpr std::string_view kOver = "RenderBudgetExceeded: ";
    if (std::string_view(e.what()).starts_with(kOver)) {
      throw TemplateBudgetError(std::string(e.what()).substr(kOver.size()));
    }
    throw;
  }
  std::string out(PyBytes_AS_STRING(bytes), static_cast<size_t>(PyBytes_GET_SIZE(bytes)));
  Py_DECREF(bytes);
  return out;
}

const std::string& ChatTemplate::source() const {
  return compiled_->source;
}

}  // namespace baton::chat
