// mha_varlen_fwd (rehearsal stand-in): the CK fmha kernels CK's generator wrote
// for this module (fmha_fwd_api.cpp, fmha_fwd_splitkv_api.cpp), named to Python.
#include "aiter_module.h"
#include "fmha_fwd.hpp"

static PyObject* names(int (*count)(), const char* (*name)(int)) {
    PyObject* list = PyList_New(0);
    for (int i = 0; i < count(); ++i) {
        PyObject* s = PyUnicode_FromString(name(i));
        PyList_Append(list, s);
        Py_DECREF(s);
    }
    return list;
}

static PyObject* fwd_kernels(PyObject*, PyObject*) {
    return names(fmha_fwd_num_instances, fmha_fwd_instance_name);
}
static PyObject* fwd_splitkv_kernels(PyObject*, PyObject*) {
    return names(fmha_fwd_splitkv_num_instances, fmha_fwd_splitkv_instance_name);
}

static PyMethodDef methods[] = {
    AITER_COMMON_METHODS,
    {"fwd_kernels", fwd_kernels, METH_NOARGS, nullptr},
    {"fwd_splitkv_kernels", fwd_splitkv_kernels, METH_NOARGS, nullptr},
    {nullptr, nullptr, 0, nullptr},
};

AITER_MODULE(methods)
