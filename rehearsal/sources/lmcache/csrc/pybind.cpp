// lmcache.c_ops (rehearsal stand-in): the Python face of LMCache's kernels.
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <cuda_runtime.h>

extern "C" const char* lmcache_gpu_archs();
extern "C" const char* torch_hip_arch_list();  // from torch's libtorch_hip.so

static PyObject* archs(PyObject*, PyObject*) { return PyUnicode_FromString(lmcache_gpu_archs()); }
static PyObject* torch_archs(PyObject*, PyObject*) {
    return PyUnicode_FromString(torch_hip_arch_list());
}
static PyObject* runtime_version(PyObject*, PyObject*) {
    int version = 0;
    if (cudaRuntimeGetVersion(&version) != cudaSuccess) version = -1;
    return PyLong_FromLong(version);
}

static PyMethodDef methods[] = {
    {"archs", archs, METH_NOARGS, "The GPU archs the kernels are compiled for."},
    {"torch_archs", torch_archs, METH_NOARGS, "The archs of the torch the module links."},
    {"runtime_version", runtime_version, METH_NOARGS, "The GPU runtime's version."},
    {nullptr, nullptr, 0, nullptr},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "c_ops", nullptr, -1, methods};

PyMODINIT_FUNC PyInit_c_ops() { return PyModule_Create(&module); }
