// NIXL (rehearsal stand-in): memory helpers for Python.
#include <pybind11/pybind11.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace py = pybind11;

PYBIND11_MODULE(_utils, m)
{
    m.doc() = "NIXL utilities (rehearsal stand-in)";
    m.def("malloc_passthru", [](size_t size) { return reinterpret_cast<uintptr_t>(malloc(size)); });
    m.def("free_passthru", [](uintptr_t addr) { free(reinterpret_cast<void *>(addr)); });
    m.def("ba_buf", [](uintptr_t addr, size_t size) {
        return py::bytes(reinterpret_cast<const char *>(addr), size);
    });
    m.def("memset_passthru", [](uintptr_t addr, int value, size_t size) {
        memset(reinterpret_cast<void *>(addr), value, size);
    });
}
