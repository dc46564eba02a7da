// cupy._core.core (rehearsal stand-in): an elementwise kernel and the module.
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <hip/hip_runtime.h>
#include <hipblas/hipblas.h>

#include "jitify.hpp"

extern "C" __global__ void cupy_add(const float* a, const float* b, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

static PyObject* version(PyObject*, PyObject*) { return PyUnicode_FromString(CUPY_VERSION); }
static PyObject* targets(PyObject*, PyObject*) { return PyUnicode_FromString(CUPY_TARGETS); }
static PyObject* blas_handle_ok(PyObject*, PyObject*) {
    hipblasHandle_t handle = nullptr;
    return PyBool_FromLong(hipblasCreate(&handle) == HIPBLAS_STATUS_SUCCESS);
}

static PyMethodDef methods[] = {
    {"version", version, METH_NOARGS, nullptr},
    {"targets", targets, METH_NOARGS, nullptr},
    {"blas_handle_ok", blas_handle_ok, METH_NOARGS, nullptr},
    {nullptr, nullptr, 0, nullptr},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "core", nullptr, -1, methods};

PyMODINIT_FUNC PyInit_core() { return PyModule_Create(&module); }
