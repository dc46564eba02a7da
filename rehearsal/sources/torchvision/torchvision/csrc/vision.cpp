// torchvision._C (rehearsal stand-in): the Python face of the extension.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

extern "C" const char* torchvision_archs();
extern "C" const char* torchvision_codecs();
extern "C" int torch_hip_has_magma();  // from torch's libtorch_hip.so

static PyObject* version(PyObject*, PyObject*) { return PyUnicode_FromString(TORCHVISION_VERSION); }
static PyObject* archs(PyObject*, PyObject*) { return PyUnicode_FromString(torchvision_archs()); }
static PyObject* codecs(PyObject*, PyObject*) { return PyUnicode_FromString(torchvision_codecs()); }
static PyObject* torch_magma(PyObject*, PyObject*) { return PyBool_FromLong(torch_hip_has_magma()); }

static PyMethodDef methods[] = {
    {"version", version, METH_NOARGS, nullptr},
    {"archs", archs, METH_NOARGS, nullptr},
    {"codecs", codecs, METH_NOARGS, nullptr},
    {"torch_magma", torch_magma, METH_NOARGS, nullptr},
    {nullptr, nullptr, 0, nullptr},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_C", nullptr, -1, methods};

PyMODINIT_FUNC PyInit__C() { return PyModule_Create(&module); }
