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


def test_a_local_hit_is_written_to_the_team_cache_too(state, tmp_path):
    """A machine whose local ccache already has an object (compiled before the team cache
    was set, or while it did not answer) writes it to the team cache on its next local hit
    (build-env.sh sets ccache's reshare), so a machine with an empty cache gets it."""
    import secrets as random

    from tools import places
    from tools.mirrors import secrets as mirror_secrets
    from tools.mirrors import settings as mirror_settings

    url = server.start().url
    binary, _ = clients.ccache()
    work = tmp_path / "w"
    (work / "bin").mkdir(parents=True)
    work.chmod(0o755)
    (work / "bin" / "ccache").symlink_to(binary)
    token = random.token_hex(8)
    (work / "src.c").write_text(f'const char *reshare = "{token}";\nint f(void) {{ return 1; }}\n')
    # 1. no team cache: the object lands in the local cache only
    before = clients._counts(clients._pass(work, work / "bin", "a"), "ccache")
    assert before["writes"] in (0, -1), before
    # 2. the team cache set: a local hit, written to the team cache as well
    table = work / "mirrors.toml"
    table.write_text(clients.settings_table(url, "ccache-http"))
    cc = mirror_settings.load(table).compiler_cache
    places.write_atomic(
        work / "secrets" / "compiler-cache", mirror_secrets.compiler_cache_env(cc), 0o644
    )
    again = clients._pass(work, work / "bin", "a")
    assert "local_storage_hit" in again or "direct_cache_hit" in again, again[-2000:]
    assert clients._counts(again, "ccache")["writes"] >= 1, again[-2000:]
    # 3. another machine, an empty local cache: a remote hit
    other = clients._counts(clients._pass(work, work / "bin", "b"), "ccache")
    assert other["hits"] >= 1 and other["misses"] == 0, other
