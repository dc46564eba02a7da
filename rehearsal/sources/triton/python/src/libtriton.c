/* triton._C.libtriton of the rehearsal's stand-in Triton: a native module. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *backend_names(PyObject *self, PyObject *args) {
    return Py_BuildValue("(ss)", "amd", "nvidia");
}

static PyMethodDef methods[] = {
    {"backend_names", backend_names, METH_NOARGS, "The backends this build carries."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "libtriton", NULL, -1, methods};

PyMODINIT_FUNC PyInit_libtriton(void) { return PyModule_Create(&module); }
