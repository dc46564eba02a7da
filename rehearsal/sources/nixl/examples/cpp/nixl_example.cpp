// NIXL (rehearsal stand-in): the plugins an agent offers.
#include "nixl.h"

#include <cstdio>

int main()
{
    nixlAgent agent("example", nixlAgentConfig());
    for (const auto &plugin : agent.getAvailPlugins()) {
        std::printf("plugin: %s\n", plugin.c_str());
    }
    return 0;
}
