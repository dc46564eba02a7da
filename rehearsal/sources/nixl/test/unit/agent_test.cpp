// NIXL (rehearsal stand-in): an agent creates its UCX backend.
#include "nixl.h"

#include <cstdio>

int main()
{
    nixlAgent agent("test", nixlAgentConfig());
    nixlBackendEngine *backend = nullptr;
    if (agent.createBackend("UCX", {}, backend) != NIXL_SUCCESS) {
        std::puts("no UCX backend");
        return 1;
    }
    nixl_b_params_t params;
    agent.getBackendParams("UCX", params);
    std::printf("UCX %s: %s\n", params["ucx_version"].c_str(), params["transports"].c_str());
    return 0;
}
