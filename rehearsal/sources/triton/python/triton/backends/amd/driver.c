/* hip_utils of the stand-in Triton's AMD driver: loads libamdhip64.so the way
 * Triton's driver does (TRITON_LIBHIP_PATH, else the loader's search path, else
 * /opt/rocm/lib) and asks the HIP runtime for its devices. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <hip/hip_runtime.h>

static void *libhip;

static int load_hip(void) {
    if (libhip) return 1;
    const char *path = getenv("TRITON_LIBHIP_PATH");
    libhip = dlopen(path && *path ? path : "libamdhip64.so", RTLD_NOW | RTLD_LOCAL);
    if (!libhip && !(path && *path))
        libhip = dlopen("/opt/rocm/lib/libamdhip64.so", RTLD_NOW | RTLD_LOCAL);
    if (!libhip) {
        PyErr_Format(PyExc_RuntimeError, "cannot load libamdhip64.so: %s", dlerror());
        return 0;
    }
    return 1;
}

static PyObject *device_count(PyObject *self, PyObject *args) {
    if (!load_hip()) return NULL;
    hipGetDeviceCount_fn count_fn = (hipGetDeviceCount_fn)dlsym(libhip, "hipGetDeviceCount");
    hipGetErrorString_fn name_fn = (hipGetErrorString_fn)dlsym(libhip, "hipGetErrorString");
    if (!count_fn) return PyErr_Format(PyExc_RuntimeError, "libamdhip64.so: no hipGetDeviceCount");
    int count = 0;
    hipError_t err = count_fn(&count);
    return Py_BuildValue("(iis)", (int)err, err == hipSuccess ? count : 0,
                         name_fn ? name_fn(err) : "");
}

static PyMethodDef methods[] = {
    {"device_count", device_count, METH_NOARGS, "(hipError_t, devices, error name)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "hip_utils", NULL, -1, methods};

PyMODINIT_FUNC PyInit_hip_utils(void) { return PyModule_Create(&module); }
