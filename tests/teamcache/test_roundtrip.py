"""The proof that the team cache works: real ccache and sccache clients, set up from the
printed settings by tools/mirrors and docker/scripts/build-env.sh as a build step is, get
a remote hit on the second compile, from an empty local cache."""

from __future__ import annotations

import pytest

from tools.teamcache import clients, server
from tools.teamcache.cli import main


@pytest.mark.parametrize("backend", clients.BACKENDS)
def test_a_second_compile_with_an_empty_local_cache_is_a_remote_hit(state, backend):
    url = server.start().url
    result = clients.check(url, backend)
    assert result.ok, result.detail
    assert result.client.startswith("ccache version " if backend == "ccache-http" else "sccache ")
    entries = [p for p in (state.data / clients.PATH_OF[backend][1:]).rglob("*") if p.is_file()]
    assert entries, f"nothing under {state.data}"
    log = state.access_log.read_text()
    assert "PUT " + clients.PATH_OF[backend] + "/" in log
    get = "GET " + clients.PATH_OF[backend] + "/"
    assert any(line.startswith(get) and " 200 " in line for line in log.splitlines())


def test_check_says_pass_per_client_and_fails_when_not_running(state, capsys):
    assert main(["check", "--backend", "ccache-http"]) == 1
    assert "is not running; start it" in capsys.readouterr().err
    server.start()
    assert main(["check"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split(" (")[0] for line in out] == ["PASS: ccache-http", "PASS: sccache-webdav"]
