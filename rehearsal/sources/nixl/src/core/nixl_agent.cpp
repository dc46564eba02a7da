// NIXL (rehearsal stand-in): the agent keeps its backends by type.
#include "nixl.h"

#include "ucx_backend.h"

nixlAgent::nixlAgent(const std::string &name, const nixlAgentConfig &config)
    : name_(name), config_(config) {}

nixlAgent::~nixlAgent() = default;

std::vector<std::string> nixlAgent::getAvailPlugins() const
{
    return {"UCX"};
}

nixl_status_t nixlAgent::createBackend(const std::string &type, const nixl_b_params_t &params,
                                       nixlBackendEngine *&backend)
{
    auto found = backends_.find(type);
    if (found != backends_.end()) {
        backend = found->second.get();
        return NIXL_SUCCESS;
    }
    if (type != "UCX") {
        return NIXL_ERR_NOT_FOUND;
    }
    std::unique_ptr<nixlBackendEngine> engine = nixlUcxEngine::create(params);
    if (!engine) {
        return NIXL_ERR_BACKEND;
    }
    backend = engine.get();
    backends_[type] = std::move(engine);
    return NIXL_SUCCESS;
}

nixl_status_t nixlAgent::getBackendParams(const std::string &type, nixl_b_params_t &params) const
{
    auto found = backends_.find(type);
    if (found == backends_.end()) {
        return NIXL_ERR_NOT_FOUND;
    }
    params = found->second->params();
    return NIXL_SUCCESS;
}

nixl_status_t nixlAgent::getBackendMemTypes(const std::string &type,
                                            std::vector<nixl_mem_t> &mems) const
{
    auto found = backends_.find(type);
    if (found == backends_.end()) {
        return NIXL_ERR_NOT_FOUND;
    }
    mems = found->second->memTypes();
    return NIXL_SUCCESS;
}
