// vllm._C (rehearsal stand-in): the Python face of the custom ops, on
// CPython's stable ABI (the extension is vllm/_C.abi3.so, as vLLM's is).
#define Py_LIMITED_API 0x03080000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

extern "C" const char* vllm_hip_archs();
extern "C" const char* torch_hip_arch_list();  // from torch's libtorch_hip.so

static PyObject* archs(PyObject*, PyObject*) { return PyUnicode_FromString(vllm_hip_archs()); }
static PyObject* torch_archs(PyObject*, PyObject*) {
    return PyUnicode_FromString(torch_hip_arch_list());
}

static PyMethodDef methods[] = {
    {"archs", archs, METH_NOARGS, "The GPU archs the custom ops are compiled for."},
    {"torch_archs", torch_archs, METH_NOARGS, "The archs of the torch the ops link."},
    {nullptr, nullptr, 0, nullptr},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_C", nullptr, -1, methods};

PyMODINIT_FUNC PyInit__C() { return PyModule_Create(&module); }
