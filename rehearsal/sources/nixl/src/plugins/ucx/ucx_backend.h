// NIXL (rehearsal stand-in): the UCX backend, a UCP context and what it loaded.
#pragma once

#include "nixl.h"

#include <ucp/api/ucp.h>

#include <memory>
#include <string>
#include <vector>

class nixlUcxEngine : public nixlBackendEngine {
public:
    // A UCP context with the features NIXL's transfers use; nullptr when UCX
    // refuses one.
    static std::unique_ptr<nixlUcxEngine> create(const nixl_b_params_t &params);
    ~nixlUcxEngine() override;

    std::string type() const override { return "UCX"; }
    nixl_b_params_t params() const override;
    std::vector<nixl_mem_t> memTypes() const override;

private:
    explicit nixlUcxEngine(ucp_context_h context);

    ucp_context_h context_;
    std::vector<std::string> transports_;
    std::vector<std::string> memHooks_;
};
