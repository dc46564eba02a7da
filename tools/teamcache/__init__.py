"""The team cache: Bazel's HTTP remote cache and the compiler cache, one loopback nginx.

    from tools.teamcache import server
    running = server.start()      # idempotent; server.stop(), server.status()
    running.url                   # http://127.0.0.1:PORT: /ac/ + /cas/, /sccache, /ccache

tools/teamcache/server.py runs it (state dir, port, pid, logs),
tools/teamcache/clients.py proves it with real ccache and sccache clients, and
`python3 -m tools.teamcache --help` is the CLI (docs/ci.md, "The team's
compiler cache").
"""
