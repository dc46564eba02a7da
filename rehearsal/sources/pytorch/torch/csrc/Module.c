/* torch._C of the stand-in torch: the Python face of libtorch_hip.so. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

const char* torch_hip_arch_list(void);
int torch_hip_has_magma(void);
const char* torch_hip_aotriton_archs(void);
int torch_hip_device_count(void);
int torch_hip_rccl_version(void);
int torch_hip_distributed(void);
int torch_hip_kineto(void);
const char* torch_hip_linked_libraries(void);

static PyObject* arch_list(PyObject* self, PyObject* args) {
    return PyUnicode_FromString(torch_hip_arch_list());
}
static PyObject* has_magma(PyObject* self, PyObject* args) {
    return PyBool_FromLong(torch_hip_has_magma());
}
static PyObject* aotriton_archs(PyObject* self, PyObject* args) {
    return PyUnicode_FromString(torch_hip_aotriton_archs());
}
static PyObject* device_count(PyObject* self, PyObject* args) {
    return PyLong_FromLong(torch_hip_device_count());
}

static PyObject* rccl_version(PyObject* self, PyObject* args) {
    return PyLong_FromLong(torch_hip_rccl_version());
}
static PyObject* has_distributed(PyObject* self, PyObject* args) {
    return PyBool_FromLong(torch_hip_distributed());
}
static PyObject* kineto_available(PyObject* self, PyObject* args) {
    return PyBool_FromLong(torch_hip_kineto());
}

static PyObject* linked_libraries(PyObject* self, PyObject* args) {
    return PyUnicode_FromString(torch_hip_linked_libraries());
}

static PyMethodDef methods[] = {
    {"_hip_arch_list", arch_list, METH_NOARGS, "The GPU archs libtorch_hip.so has code for."},
    {"_has_magma", has_magma, METH_NOARGS, "Whether libtorch_hip.so links MAGMA."},
    {"_aotriton_archs", aotriton_archs, METH_NOARGS, "The archs AOTriton has kernels for."},
    {"_device_count", device_count, METH_NOARGS, "The GPUs HIP sees."},
    {"_rccl_version", rccl_version, METH_NOARGS, "The RCCL libtorch_hip.so links (0: none)."},
    {"_has_distributed", has_distributed, METH_NOARGS, "Built with USE_DISTRIBUTED."},
    {"_kineto_available", kineto_available, METH_NOARGS, "Built with Kineto (USE_KINETO)."},
    {"_linked_libraries", linked_libraries, METH_NOARGS,
     "library=file;... of the ROCm libraries libtorch_hip.so binds."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "torch._C", NULL, -1, methods};

PyMODINIT_FUNC PyInit__C(void) { return PyModule_Create(&module); }
