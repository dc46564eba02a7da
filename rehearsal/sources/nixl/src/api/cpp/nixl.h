// NIXL (rehearsal stand-in): the agent, NIXL's C++ API in small.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

enum nixl_status_t { NIXL_SUCCESS = 0, NIXL_ERR_NOT_FOUND = -2, NIXL_ERR_BACKEND = -4 };
enum nixl_mem_t { DRAM_SEG = 0, VRAM_SEG = 1, BLK_SEG = 2, OBJ_SEG = 3, FILE_SEG = 4 };
enum nixl_xfer_op_t { NIXL_READ = 0, NIXL_WRITE = 1 };
enum class nixl_thread_sync_t { NIXL_THREAD_SYNC_NONE, NIXL_THREAD_SYNC_STRICT, NIXL_THREAD_SYNC_RW };

constexpr int default_comm_port = 5555;

using nixl_b_params_t = std::map<std::string, std::string>;

struct nixlAgentConfig {
    bool useProgThread = true;
    bool useListenThread = false;
    int listenPort = default_comm_port;
    nixl_thread_sync_t syncMode = nixl_thread_sync_t::NIXL_THREAD_SYNC_NONE;
    bool captureTelemetry = false;
};

class nixlBackendEngine {
public:
    virtual ~nixlBackendEngine() = default;
    virtual std::string type() const = 0;
    virtual nixl_b_params_t params() const = 0;
    virtual std::vector<nixl_mem_t> memTypes() const = 0;
};

class nixlAgent {
public:
    nixlAgent(const std::string &name, const nixlAgentConfig &config);
    ~nixlAgent();

    const std::string &name() const { return name_; }
    std::vector<std::string> getAvailPlugins() const;
    nixl_status_t createBackend(const std::string &type, const nixl_b_params_t &params,
                                nixlBackendEngine *&backend);
    nixl_status_t getBackendParams(const std::string &type, nixl_b_params_t &params) const;
    nixl_status_t getBackendMemTypes(const std::string &type, std::vector<nixl_mem_t> &mems) const;

private:
    std::string name_;
    nixlAgentConfig config_;
    std::map<std::string, std::unique_ptr<nixlBackendEngine>> backends_;
};
