"""python3 -m tools.mirrors: show, check (--probe against a loopback mirror), render."""

from __future__ import annotations

import base64
import http.server
import json
import threading

import pytest

from tests.mirrors.conftest import PASSWORD
from tools.mirrors import cli
from tools.mirrors.settings import STANDIN_ARCHIVE as STANDIN


@pytest.fixture
def mirror():
    """A loopback HTTP 'mirror' that wants Basic auth builder:PASSWORD; yields its URL."""
    want = "Basic " + base64.b64encode(f"builder:{PASSWORD}".encode()).decode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.headers.get("Authorization") != want:
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="mirror"')
                self.end_headers()
                return
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_show_without_a_file(no_settings, capsys, monkeypatch):
    monkeypatch.setattr(
        cli.secrets_mod.host_mod, "debian_mirror", lambda etc: "http://deb.example/debian"
    )
    assert cli.main(["show"]) == 0
    out = capsys.readouterr().out
    assert f"settings: {no_settings} (no file: the defaults)" in out
    assert "apt: http://debian.invalid/debian -> http://deb.example/debian" in out


def test_show_names_the_netrc_file_never_its_content(settings_file, netrc_file, capsys):
    settings_file.write_text(
        f'[auth]\nnetrc = "{netrc_file}"\n[pip]\nindex_url = "https://p.example/simple"\n'
    )
    assert cli.main(["show"]) == 0
    out = capsys.readouterr().out
    assert (
        f"credentials: {netrc_file} (netrc)" in out and "pip index: https://p.example/simple" in out
    )
    assert PASSWORD not in out
    assert cli.main(["show", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["netrc"] == str(netrc_file) and data["exists"] is True
    assert PASSWORD not in json.dumps(data)


def test_check_refuses_a_bad_file_in_one_line(settings_file, capsys):
    settings_file.write_text('[pip]\nindex_url = "https://u:p@x.example/simple"\n')
    assert cli.main(["check"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("mirrors: error: ") and "\n" not in err and "netrc" in err


def test_check_probe_uses_the_netrc_credentials(settings_file, netrc_file, mirror, capsys):
    settings_file.write_text(
        f'[pip]\nindex_url = "{mirror}/simple"\n[auth]\nnetrc = "{netrc_file}"\n'
        '[tls]\nca_bundle = ""\n'
    )
    assert cli.main(["check", "--probe"]) == 0
    assert f"{mirror}/simple: answers (HTTP 200)" in capsys.readouterr().out


def test_check_probe_reports_a_mirror_that_does_not_answer(settings_file, capsys):
    settings_file.write_text(
        '[pip]\nindex_url = "http://127.0.0.1:1/simple"\n[tls]\nca_bundle = ""\n'
    )
    assert cli.main(["check", "--probe", "--timeout", "2"]) == 1
    assert "http://127.0.0.1:1/simple: does not answer" in capsys.readouterr().out


def test_render_writes_what_a_build_gets(settings_file, netrc_file, tmp_path, capsys):
    settings_file.write_text(f'[auth]\nnetrc = "{netrc_file}"\n[tls]\nca_bundle = ""\n')
    assert cli.main(["render", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "mirror-netrc: " in out and "(mounted at /root/.netrc)" in out
    assert (tmp_path / "out" / "mirror-netrc").read_text() == netrc_file.read_text()


@pytest.mark.parametrize("argv", [[], ["frobnicate"], ["check", "--timeout", "x"]])
def test_usage_errors_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    assert e.value.code == 2
    assert "see `mirrors --help`" in capsys.readouterr().err or "see `mirrors check --help`"


def test_every_command_has_help(capsys):
    for argv in (["--help"], ["show", "--help"], ["check", "--help"], ["render", "--help"]):
        with pytest.raises(SystemExit) as e:
            cli.main(argv)
        assert e.value.code == 0
    assert "netrc" in capsys.readouterr().out


def test_show_names_the_compiler_cache_and_its_credentials_file(settings_file, tmp_path, capsys):
    login = tmp_path / "cc-login"
    login.write_text(f"builder:{PASSWORD}\n")
    settings_file.write_text(
        '[compiler_cache]\nbackend = "sccache-webdav"\n'
        f'endpoint = "http://cache.example:8080/sccache"\ncredentials = "{login}"\n'
    )
    assert cli.main(["show"]) == 0
    out = capsys.readouterr().out
    assert "compiler cache: sccache-webdav at http://cache.example:8080/sccache" in out
    assert f"compiler cache credentials: {login} (file)" in out and PASSWORD not in out
    assert cli.main(["show", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["compiler_cache"] == {
        "backend": "sccache-webdav",
        "endpoint": "http://cache.example:8080/sccache",
        "credentials": str(login),
    }
    assert cli.main(["render", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "(mounted at /run/secrets/compiler-cache)" in out
    assert "(mounted at /run/secrets/compiler-cache-credentials)" in out


def test_check_probe_asks_the_compiler_cache(settings_file, mirror, capsys):
    # every mirror on loopback: no probe leaves this host
    mirrors = (
        f'[tls]\nca_bundle = ""\n[pip]\nindex_url = ""\n[apt.rewrite]\n"{STANDIN}" = "{mirror}/d"\n'
    )
    settings_file.write_text(
        mirrors
        + f'[compiler_cache]\nbackend = "ccache-http"\nendpoint = "{mirror}/ccache|layout=bazel"\n'
    )
    assert cli.main(["check", "--probe"]) == 0
    assert f"compiler cache ccache-http at {mirror}/ccache: answers (HTTP 401)" in (
        capsys.readouterr().out
    )
    settings_file.write_text(
        mirrors + '[compiler_cache]\nbackend = "sccache-redis"\nendpoint = "redis://127.0.0.1:9"\n'
    )
    assert cli.main(["check", "--probe", "--timeout", "2"]) == 1
    assert "compiler cache sccache-redis at redis://127.0.0.1:9: does not answer (" in (
        capsys.readouterr().out
    )
