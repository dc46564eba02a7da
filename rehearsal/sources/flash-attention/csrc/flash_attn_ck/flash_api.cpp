// flash_attn_2_cuda (rehearsal stand-in): the extension's Python face.
#include <cstring>

#include "flash_common.hpp"

static PyObject* archs(PyObject*, PyObject*) { return PyUnicode_FromString(FLASH_ATTN_ARCHS); }
static PyObject* torch_archs(PyObject*, PyObject*) { return PyUnicode_FromString(torch_hip_arch_list()); }

static PyObject* kernels(PyObject*, PyObject* arg) {
    const char* d = PyUnicode_AsUTF8(arg);
    if (!d) return nullptr;
    int (*count)() = nullptr;
    const char* (*name)(int) = nullptr;
    if (!strcmp(d, "fwd")) count = fmha_fwd_num_instances, name = fmha_fwd_instance_name;
    else if (!strcmp(d, "fwd_appendkv")) count = fmha_fwd_appendkv_num_instances, name = fmha_fwd_appendkv_instance_name;
    else if (!strcmp(d, "fwd_splitkv")) count = fmha_fwd_splitkv_num_instances, name = fmha_fwd_splitkv_instance_name;
    else if (!strcmp(d, "bwd")) count = fmha_bwd_num_instances, name = fmha_bwd_instance_name;
    else return PyErr_Format(PyExc_ValueError, "no direction %s", d);
    PyObject* list = PyList_New(0);
    for (int i = 0; i < count(); ++i) {
        PyObject* s = PyUnicode_FromString(name(i));
        PyList_Append(list, s);
        Py_DECREF(s);
    }
    return list;
}

static PyMethodDef methods[] = {
    {"archs", archs, METH_NOARGS, nullptr},
    {"torch_archs", torch_archs, METH_NOARGS, nullptr},
    {"kernels", kernels, METH_O, nullptr},
    {nullptr, nullptr, 0, nullptr},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "flash_attn_2_cuda", nullptr, -1, methods};

PyMODINIT_FUNC PyInit_flash_attn_2_cuda() { return PyModule_Create(&module); }
