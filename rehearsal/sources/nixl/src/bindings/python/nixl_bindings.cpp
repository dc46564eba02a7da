// NIXL (rehearsal stand-in): the agent for Python (pybind11), linked with
// libucp and with the HIP kernel.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <stdexcept>

#include "nixl.h"
#include "nixl_rocm_kernels.h"
#include "ucx_backend.h"

namespace py = pybind11;

PYBIND11_MODULE(_bindings, m)
{
    m.doc() = "NIXL bindings (rehearsal stand-in)";
    m.attr("DEFAULT_COMM_PORT") = default_comm_port;
    m.attr("NIXL_THREAD_SYNC_NONE") = static_cast<int>(nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE);
    m.attr("NIXL_THREAD_SYNC_STRICT") =
        static_cast<int>(nixl_thread_sync_t::NIXL_THREAD_SYNC_STRICT);
    m.attr("NIXL_THREAD_SYNC_RW") = static_cast<int>(nixl_thread_sync_t::NIXL_THREAD_SYNC_RW);
    m.attr("NIXL_THREAD_SYNC_DEFAULT") =
        static_cast<int>(nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE);
    m.attr("DRAM_SEG") = static_cast<int>(DRAM_SEG);
    m.attr("VRAM_SEG") = static_cast<int>(VRAM_SEG);
    m.attr("BLK_SEG") = static_cast<int>(BLK_SEG);
    m.attr("OBJ_SEG") = static_cast<int>(OBJ_SEG);
    m.attr("FILE_SEG") = static_cast<int>(FILE_SEG);
    m.attr("NIXL_READ") = static_cast<int>(NIXL_READ);
    m.attr("NIXL_WRITE") = static_cast<int>(NIXL_WRITE);

    m.def("ucx_version", []() { return std::string(ucp_get_version_string()); },
          "The version of the libucp this module loaded");
    m.def("rocm_targets", []() { return std::string(nixlRocmTargets()); },
          "The GPU targets of the HIP kernel's code objects");

    py::class_<nixlAgentConfig>(m, "nixlAgentConfig")
        .def(py::init<>())
        .def_readwrite("useProgThread", &nixlAgentConfig::useProgThread)
        .def_readwrite("useListenThread", &nixlAgentConfig::useListenThread)
        .def_readwrite("listenPort", &nixlAgentConfig::listenPort)
        .def_readwrite("captureTelemetry", &nixlAgentConfig::captureTelemetry)
        .def_property(
            "syncMode", [](const nixlAgentConfig &c) { return static_cast<int>(c.syncMode); },
            [](nixlAgentConfig &c, int mode) { c.syncMode = static_cast<nixl_thread_sync_t>(mode); });

    py::class_<nixlAgent>(m, "nixlAgent")
        .def(py::init<const std::string &, const nixlAgentConfig &>())
        .def("getAvailPlugins", &nixlAgent::getAvailPlugins)
        .def("createBackend",
             [](nixlAgent &agent, const std::string &type, const nixl_b_params_t &params) {
                 nixlBackendEngine *backend = nullptr;
                 if (agent.createBackend(type, params, backend) != NIXL_SUCCESS) {
                     throw std::runtime_error("NIXL: cannot create backend " + type);
                 }
                 return reinterpret_cast<uintptr_t>(backend);
             })
        .def("getBackendParams",
             [](const nixlAgent &agent, const std::string &type) {
                 nixl_b_params_t params;
                 if (agent.getBackendParams(type, params) != NIXL_SUCCESS) {
                     throw std::runtime_error("NIXL: no backend " + type);
                 }
                 return params;
             })
        .def("getBackendMemTypes", [](const nixlAgent &agent, const std::string &type) {
            std::vector<nixl_mem_t> mems;
            if (agent.getBackendMemTypes(type, mems) != NIXL_SUCCESS) {
                throw std::runtime_error("NIXL: no backend " + type);
            }
            std::vector<int> out(mems.begin(), mems.end());
            return out;
        });
}
