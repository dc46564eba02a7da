// module_activation (rehearsal stand-in): the Python face of the activation kernels.
#include "aiter_module.h"

extern "C" const char* aiter_activation_kernels();

static PyObject* kernels(PyObject*, PyObject*) { return PyUnicode_FromString(aiter_activation_kernels()); }

static PyMethodDef methods[] = {
    AITER_COMMON_METHODS,
    {"kernels", kernels, METH_NOARGS, nullptr},
    {nullptr, nullptr, 0, nullptr},
};

AITER_MODULE(methods)
