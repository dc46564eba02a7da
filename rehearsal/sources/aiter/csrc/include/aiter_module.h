// What every aiter module (rehearsal stand-in) has: its name (TORCH_EXTENSION_NAME,
// the module's md_name), the archs it was built for and those of the torch it links.
#pragma once
#define PY_SSIZE_T_CLEAN
#include <Python.h>

extern "C" const char* torch_hip_arch_list();  // torch's libtorch_hip.so

#define AITER_CONCAT_(a, b) a##b
#define AITER_CONCAT(a, b) AITER_CONCAT_(a, b)
#define AITER_STR_(a) #a
#define AITER_STR(a) AITER_STR_(a)

static PyObject* aiter_gpu_archs(PyObject*, PyObject*) { return PyUnicode_FromString(AITER_GPU_ARCHS); }
static PyObject* aiter_torch_archs(PyObject*, PyObject*) {
    return PyUnicode_FromString(torch_hip_arch_list());
}

#define AITER_COMMON_METHODS                                         \
    {"gpu_archs", aiter_gpu_archs, METH_NOARGS, nullptr},            \
    {"torch_archs", aiter_torch_archs, METH_NOARGS, nullptr}

#define AITER_MODULE(methods)                                                          \
    static struct PyModuleDef aiter_module_def = {                                     \
        PyModuleDef_HEAD_INIT, AITER_STR(TORCH_EXTENSION_NAME), nullptr, -1, methods}; \
    PyMODINIT_FUNC AITER_CONCAT(PyInit_, TORCH_EXTENSION_NAME)() {                     \
        return PyModule_Create(&aiter_module_def);                                     \
    }
