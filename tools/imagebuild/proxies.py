"""The client's HTTP proxies, honoured by the RUNs of image builds.

A user behind a proxy sets HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and NO_PROXY
(either spelling) in the shell that runs bazel; the client settings carry
them to the build action (tools/client_env.py, in no action key). They reach
BuildKit as its predefined proxy build arguments, which every RUN sees in its
environment without an ARG, which are in no BuildKit cache key and in no
image (config, history): a new proxy rebuilds nothing and leaks nowhere.

On the command line each is `--build-arg NAME` without a value: the docker
CLI takes the value from its environment, so a proxy's credentials are in no
argument list (ps) and no build log. Both spellings are passed (apt reads
only the lower-case ones), and the no-proxy list gets the loopback addresses,
which the RUNs reach directly (the rehearsal's sources, a compiler cache on
this host). Without a proxy set, nothing is passed.
"""

from __future__ import annotations

from collections.abc import Mapping

PROXIES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def build_args(environ: Mapping[str, str]) -> tuple[list[str], dict[str, str]]:
    """(`--build-arg NAME` arguments, the NAME=value environment the docker CLI needs
    for them) for the proxies set in ``environ``; ([], {}) when none is."""
    env: dict[str, str] = {}
    for name in PROXIES:
        value = (environ.get(name) or environ.get(name.lower()) or "").strip()
        if value:
            env[name] = env[name.lower()] = value
    if not env:
        return [], {}
    given = (environ.get("NO_PROXY") or environ.get("no_proxy") or "").strip()
    hosts = [h.strip() for h in given.split(",") if h.strip()]
    hosts += [h for h in LOOPBACK if h not in hosts]
    env["NO_PROXY"] = env["no_proxy"] = ",".join(hosts)
    args = [a for name in sorted(env) for a in ("--build-arg", name)]
    return args, env
