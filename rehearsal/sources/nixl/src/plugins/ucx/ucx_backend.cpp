// NIXL (rehearsal stand-in): the UCX backend. VRAM is offered when UCX loaded
// a ROCm transport (its rocm_cpy/rocm_ipc modules, from lib/ucx).
#include "ucx_backend.h"

std::unique_ptr<nixlUcxEngine> nixlUcxEngine::create(const nixl_b_params_t &params)
{
    (void)params;
    ucp_params_t ucp_params = {};
    ucp_params.field_mask = UCP_PARAM_FIELD_FEATURES;
    ucp_params.features = UCP_FEATURE_RMA | UCP_FEATURE_AM;
    ucp_context_h context = nullptr;
    if (ucp_init(&ucp_params, nullptr, &context) != UCS_OK) {
        return nullptr;
    }
    return std::unique_ptr<nixlUcxEngine>(new nixlUcxEngine(context));
}

nixlUcxEngine::nixlUcxEngine(ucp_context_h context) : context_(context)
{
    for (unsigned i = 0; i < ucp_context_num_transports(context); ++i) {
        transports_.emplace_back(ucp_context_transport_name(context, i));
    }
    for (unsigned i = 0; i < ucp_context_num_mem_hooks(context); ++i) {
        memHooks_.emplace_back(ucp_context_mem_hook_name(context, i));
    }
}

nixlUcxEngine::~nixlUcxEngine()
{
    ucp_cleanup(context_);
}

static std::string join(const std::vector<std::string> &words)
{
    std::string out;
    for (const auto &w : words) {
        out += (out.empty() ? "" : ",") + w;
    }
    return out;
}

nixl_b_params_t nixlUcxEngine::params() const
{
    return {{"ucx_version", ucp_get_version_string()},
            {"transports", join(transports_)},
            {"mem_hooks", join(memHooks_)}};
}

std::vector<nixl_mem_t> nixlUcxEngine::memTypes() const
{
    for (const auto &t : transports_) {
        if (t.rfind("rocm", 0) == 0) {
            return {DRAM_SEG, VRAM_SEG};
        }
    }
    return {DRAM_SEG};
}
