"""The AMD driver of the stand-in Triton: what runs on a kernel's first launch.

As third_party/amd/backend/driver.py does, the driver compiles its C helpers at
run time with triton.runtime.build (the system C compiler, the interpreter's
Python.h, the HIP headers Triton carries) into Triton's cache and imports them:
``hip_utils`` (driver.c: libamdhip64.so loaded with dlopen) once, and a
``__triton_launcher`` per kernel signature, whose ``launch`` unpacks the grid and
the arguments (a pointer's ``data_ptr()``) into HIP's kernel parameters.

The device step: the launcher asks the HIP runtime for its devices. With one, it
would call hipModuleLaunchKernel, but the stand-in compiles no GPU code, so it
refuses. Without one (hipGetDeviceCount fails or counts 0, as the HIP runtime
does on a host without a GPU), it runs the kernel's Python body once per program
of the grid on the CPU, as Triton's interpreter (TRITON_INTERPRET=1) would.
"""

import functools
import os

from triton.runtime.build import compile_module_from_src

HERE = os.path.dirname(__file__)
INCLUDE = os.path.join(HERE, "include")

# signature type -> (C type, PyArg_ParseTuple format)
TYPES = {
    "*": ("hipDeviceptr_t", "O"),
    "i32": ("int32_t", "i"),
    "i64": ("int64_t", "L"),
    "fp32": ("float", "f"),
    "fp64": ("double", "d"),
}


def _c(ty: str) -> tuple[str, str]:
    return TYPES["*"] if ty.startswith("*") else TYPES[ty]


def make_launcher_src(signature: list[str]) -> str:
    """The C source of the launcher for a kernel of ``signature`` (e.g. ["*i64", "i32"])."""
    decls, parse, convert, params = [], [], [], []
    for i, ty in enumerate(signature):
        ctype, fmt = _c(ty)
        if ty.startswith("*"):
            decls.append(f"PyObject *obj{i} = NULL; hipDeviceptr_t arg{i} = NULL;")
            convert.append(f"if (!device_ptr(obj{i}, &arg{i})) return NULL;")
        else:
            decls.append(f"{ctype} arg{i} = 0;")
        parse.append((fmt, f"&{'obj' if ty.startswith('*') else 'arg'}{i}"))
        params.append(f"&arg{i}")
    fmt = "iiiKO" + "".join(f for f, _ in parse)
    refs = ", ".join(
        ["&gridX", "&gridY", "&gridZ", "&function", "&emulate"] + [r for _, r in parse]
    )
    return f"""/* __triton_launcher for ({", ".join(signature)}), written by the stand-in Triton */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <hip/hip_runtime.h>

static void *libhip;

static int load_hip(void) {{
    if (libhip) return 1;
    const char *path = getenv("TRITON_LIBHIP_PATH");
    libhip = dlopen(path && *path ? path : "libamdhip64.so", RTLD_NOW | RTLD_LOCAL);
    if (!libhip && !(path && *path))
        libhip = dlopen("/opt/rocm/lib/libamdhip64.so", RTLD_NOW | RTLD_LOCAL);
    if (!libhip) {{
        PyErr_Format(PyExc_RuntimeError, "cannot load libamdhip64.so: %s", dlerror());
        return 0;
    }}
    return 1;
}}

static int device_ptr(PyObject *obj, hipDeviceptr_t *ptr) {{
    PyObject *value = PyObject_HasAttrString(obj, "data_ptr")
        ? PyObject_CallMethod(obj, "data_ptr", NULL) : (Py_INCREF(obj), obj);
    if (!value) return 0;
    *ptr = PyLong_AsVoidPtr(value);
    Py_DECREF(value);
    return !PyErr_Occurred();
}}

static PyObject *launch(PyObject *self, PyObject *args) {{
    int gridX, gridY, gridZ;
    unsigned long long function;
    PyObject *emulate;
    {" ".join(decls)}
    if (!PyArg_ParseTuple(args, "{fmt}", {refs})) return NULL;
    {" ".join(convert)}
    void *params[] = {{{", ".join(params) or "NULL"}}};
    (void)params;
    if (!load_hip()) return NULL;
    hipGetDeviceCount_fn count_fn = (hipGetDeviceCount_fn)dlsym(libhip, "hipGetDeviceCount");
    hipModuleLaunchKernel_fn launch_fn =
        (hipModuleLaunchKernel_fn)dlsym(libhip, "hipModuleLaunchKernel");
    int devices = 0;
    if (count_fn && count_fn(&devices) == hipSuccess && devices > 0) {{
        if (!function || !launch_fn)
            return PyErr_Format(PyExc_RuntimeError,
                "stand-in triton: %d HIP device(s), but no code object to launch (the stand-in"
                " compiles no GPU code)", devices);
        /* never reached in the stand-in: function is always 0 */
        return NULL;
    }}
    /* no device: the kernel's body on the CPU, program by program */
    for (int z = 0; z < gridZ; z++)
        for (int y = 0; y < gridY; y++)
            for (int x = 0; x < gridX; x++) {{
                PyObject *r = PyObject_CallFunction(emulate, "iii", x, y, z);
                if (!r) return NULL;
                Py_DECREF(r);
            }}
    return PyLong_FromLong(devices);
}}

static PyMethodDef methods[] = {{
    {{"launch", launch, METH_VARARGS, "Launch the kernel on the grid."}},
    {{NULL, NULL, 0, NULL}},
}};

static struct PyModuleDef module = {{
    PyModuleDef_HEAD_INIT, "__triton_launcher", NULL, -1, methods}};

PyMODINIT_FUNC PyInit___triton_launcher(void) {{ return PyModule_Create(&module); }}
"""


class HIPUtils:
    def __init__(self):
        with open(os.path.join(HERE, "driver.c")) as f:
            src = f.read()
        self.module = compile_module_from_src(src, "hip_utils", include_dirs=[INCLUDE])

    def device_count(self) -> tuple[int, int, str]:
        return self.module.device_count()


class HIPLauncher:
    def __init__(self, signature: list[str]):
        self.signature = list(signature)
        self.module = compile_module_from_src(
            make_launcher_src(self.signature), "__triton_launcher", include_dirs=[INCLUDE]
        )

    def __call__(self, grid, function, emulate, *args):
        x, y, z = (*grid, 1, 1)[:3]
        return self.module.launch(x, y, z, function, emulate, *args)


class HIPDriver:
    def __init__(self):
        self.utils = HIPUtils()
        self.launcher_cls = HIPLauncher


@functools.cache
def active() -> HIPDriver:
    return HIPDriver()
