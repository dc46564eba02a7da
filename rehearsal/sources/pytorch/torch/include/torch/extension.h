// torch/extension.h of the stand-in torch (the rehearsal's): what the module that
// torch.utils.cpp_extension.load_inline generates needs, on Python's C API.
//
// Like PyTorch's (which pulls in ATen and pybind11) it needs Python.h of the
// interpreter (-isystem sysconfig's include) and a C++17 compiler. It binds what the
// generated `PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("f",
// torch::wrap_pybind_function(f), "doc"); }` binds: free functions, here of integers,
// floating point numbers, bools and std::string (no tensors: the stand-in's are numpy).
// Another parameter type fails to compile, naming this header.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace pybind11 {

struct error_already_set : std::exception {
  const char *what() const noexcept override { return "a Python error is set"; }
};

namespace detail {

template <typename T>
inline constexpr bool unsupported = false;

inline bool type_error(PyObject *o, const char *expected) {
  PyErr_Format(PyExc_TypeError, "incompatible function arguments: expected %s, got %s",
               expected, Py_TYPE(o)->tp_name);
  return false;
}

template <typename T>
bool from_python(PyObject *o, T &out) {
  if constexpr (std::is_same_v<T, bool>) {
    if (!PyBool_Check(o)) return type_error(o, "bool");
    out = o == Py_True;
  } else if constexpr (std::is_integral_v<T>) {
    if (!PyLong_Check(o)) return type_error(o, "int");
    long long v = PyLong_AsLongLong(o);
    if (v == -1 && PyErr_Occurred()) return false;
    out = static_cast<T>(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!PyFloat_Check(o) && !PyLong_Check(o)) return type_error(o, "float");
    double v = PyFloat_AsDouble(o);
    if (v == -1.0 && PyErr_Occurred()) return false;
    out = static_cast<T>(v);
  } else if constexpr (std::is_same_v<T, std::string>) {
    Py_ssize_t size = 0;
    const char *s = PyUnicode_Check(o) ? PyUnicode_AsUTF8AndSize(o, &size) : nullptr;
    if (s == nullptr) return PyErr_Occurred() ? false : type_error(o, "str");
    out.assign(s, static_cast<size_t>(size));
  } else {
    static_assert(unsupported<T>,
                  "the stand-in torch/extension.h binds integers, floats, bools and strings only");
  }
  return true;
}

template <typename T>
PyObject *to_python(const T &value) {
  if constexpr (std::is_same_v<T, bool>) {
    return PyBool_FromLong(value);
  } else if constexpr (std::is_integral_v<T>) {
    return PyLong_FromLongLong(static_cast<long long>(value));
  } else if constexpr (std::is_floating_point_v<T>) {
    return PyFloat_FromDouble(static_cast<double>(value));
  } else if constexpr (std::is_same_v<T, std::string>) {
    return PyUnicode_FromStringAndSize(value.data(), static_cast<Py_ssize_t>(value.size()));
  } else {
    static_assert(unsupported<T>,
                  "the stand-in torch/extension.h binds integers, floats, bools and strings only");
  }
}

constexpr const char *CAPSULE = "torch.extension.binding";

template <typename R, typename... A>
struct Binding {
  R (*function)(A...);

  template <size_t... I>
  static PyObject *invoke(Binding *b, PyObject *args, std::index_sequence<I...>) {
    std::tuple<std::decay_t<A>...> values;
    (void)args;
    if (!(true && ... && from_python(PyTuple_GET_ITEM(args, I), std::get<I>(values))))
      return nullptr;
    if constexpr (std::is_void_v<R>) {
      b->function(std::get<I>(values)...);
      Py_RETURN_NONE;
    } else {
      return to_python(b->function(std::get<I>(values)...));
    }
  }

  static PyObject *call(PyObject *self, PyObject *args) {
    auto *b = static_cast<Binding *>(PyCapsule_GetPointer(self, CAPSULE));
    if (b == nullptr) return nullptr;
    if (PyTuple_GET_SIZE(args) != static_cast<Py_ssize_t>(sizeof...(A))) {
      PyErr_Format(PyExc_TypeError,
                   "incompatible function arguments: takes %zd positional arguments, %zd given",
                   static_cast<Py_ssize_t>(sizeof...(A)), PyTuple_GET_SIZE(args));
      return nullptr;
    }
    try {
      return invoke(b, args, std::index_sequence_for<A...>{});
    } catch (const error_already_set &) {
      return nullptr;
    } catch (const std::exception &e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
      return nullptr;
    }
  }
};

}  // namespace detail

class module_ {
 public:
  explicit module_(PyObject *m) : m_(m) {}
  PyObject *ptr() const { return m_; }

  template <typename R, typename... A>
  module_ &def(const char *name, R (*f)(A...), const char *doc = nullptr) {
    using B = detail::Binding<R, A...>;
    // the method table entry and the binding live as long as the process, as pybind11's
    auto *method = new PyMethodDef{name, reinterpret_cast<PyCFunction>(&B::call), METH_VARARGS,
                                   doc};
    PyObject *self = PyCapsule_New(new B{f}, detail::CAPSULE, nullptr);
    if (self == nullptr) throw error_already_set();
    PyObject *module_name = PyModule_GetNameObject(m_);
    PyObject *function =
        module_name == nullptr ? nullptr : PyCFunction_NewEx(method, self, module_name);
    Py_XDECREF(module_name);
    Py_DECREF(self);
    if (function == nullptr || PyModule_AddObject(m_, name, function) < 0) {
      Py_XDECREF(function);
      throw error_already_set();
    }
    return *this;
  }

 private:
  PyObject *m_;
};
using module = module_;

}  // namespace pybind11

namespace py = pybind11;

namespace torch {
// PyTorch's turns c10 errors into Python ones; the stand-in's bindings turn any
// std::exception into RuntimeError themselves.
template <typename F>
F wrap_pybind_function(F f) {
  return f;
}
}  // namespace torch

#define TORCH_STANDIN_CAT2(a, b) a##b
#define TORCH_STANDIN_CAT(a, b) TORCH_STANDIN_CAT2(a, b)
#define TORCH_STANDIN_STR2(a) #a
#define TORCH_STANDIN_STR(a) TORCH_STANDIN_STR2(a)

#define PYBIND11_MODULE(name, variable)                                                \
  static void TORCH_STANDIN_CAT(torch_standin_init_, name)(pybind11::module_ &);      \
  extern "C" __attribute__((visibility("default"))) PyObject *TORCH_STANDIN_CAT(      \
      PyInit_, name)() {                                                             \
    static PyModuleDef def = {PyModuleDef_HEAD_INIT, TORCH_STANDIN_STR(name), nullptr, \
                              -1, nullptr, nullptr, nullptr, nullptr, nullptr};      \
    PyObject *m = PyModule_Create(&def);                                             \
    if (m == nullptr) return nullptr;                                                \
    try {                                                                            \
      pybind11::module_ wrapped(m);                                                  \
      TORCH_STANDIN_CAT(torch_standin_init_, name)(wrapped);                         \
    } catch (const pybind11::error_already_set &) {                                  \
      Py_DECREF(m);                                                                  \
      return nullptr;                                                                \
    } catch (const std::exception &e) {                                              \
      Py_DECREF(m);                                                                  \
      PyErr_SetString(PyExc_ImportError, e.what());                                  \
      return nullptr;                                                                \
    }                                                                                \
    return m;                                                                        \
  }                                                                                  \
  static void TORCH_STANDIN_CAT(torch_standin_init_, name)(pybind11::module_ & variable)
