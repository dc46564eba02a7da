"""What `host` stands for: this host's Debian mirror, pip index and CA bundle."""

from __future__ import annotations

import pytest

from tools.mirrors import host
from tools.mirrors.settings import MirrorError


def apt_dir(tmp_path, sources_list: str = "", parts: dict[str, str] | None = None):
    d = tmp_path / "apt"
    (d / "sources.list.d").mkdir(parents=True)
    (d / "sources.list").write_text(sources_list)
    for name, text in (parts or {}).items():
        (d / "sources.list.d" / name).write_text(text)
    return d


def test_one_line_sources_with_options_and_comments(tmp_path):
    d = apt_dir(
        tmp_path,
        "# deb http://old.example/debian sid main\n"
        "deb-src http://src.example/debian sid main\n"
        "deb [arch=amd64 signed-by=/k.gpg] http://deb.example/debian/ sid main # trailing\n",
    )
    assert host.apt_sources(d) == [
        host.AptSource("http://deb.example/debian", ("sid",), str(d / "sources.list"))
    ]


def test_deb822_sources_skip_disabled_and_non_deb_stanzas(tmp_path):
    d = apt_dir(
        tmp_path,
        parts={
            "debian.sources": "Types: deb-src\nURIs: http://src.example/debian\nSuites: sid\n\n"
            "Types: deb\nURIs: http://off.example/debian\nSuites: sid\nEnabled: no\n\n"
            "# a comment\nTypes: deb deb-src\nURIs: http://a.example/debian\n"
            " http://b.example/debian\nSuites: bookworm bookworm-updates\nComponents: main\n",
            "ignored.txt": "deb http://x.example/debian sid main\n",
        },
    )
    assert [(s.uri, s.suites) for s in host.apt_sources(d)] == [
        ("http://a.example/debian", ("bookworm", "bookworm-updates")),
        ("http://b.example/debian", ("bookworm", "bookworm-updates")),
    ]


def test_the_debian_mirror_is_the_first_source_ending_in_debian(tmp_path):
    d = apt_dir(
        tmp_path,
        "deb http://security.example/debian-security sid main\n"
        "deb http://apt.example/nodesource nodistro main\n"
        "deb http://deb.example/debian sid main\n",
    )
    assert host.debian_mirror(d) == "http://deb.example/debian"


def test_no_debian_mirror_names_what_it_found(tmp_path):
    d = apt_dir(tmp_path, "deb http://archive.example/ubuntu noble main\n")
    with pytest.raises(
        MirrorError, match=r"no Debian apt source .* found: http://archive.example/ubuntu"
    ):
        host.debian_mirror(d)


def test_pip_index_later_files_win_and_local_indexes_are_left_out(tmp_path):
    first = tmp_path / "a.conf"
    first.write_text(
        "[global]\nindex-url = https://first.example/simple\n"
        "constraint = /etc/xdg/pip/constraints.txt\ncert = /etc/ssl/host.pem\n"
    )
    second = tmp_path / "b.conf"
    second.write_text(
        "[install]\nextra-index-url = file:///opt/pypi/simple https://extra.example/simple\n"
        "trusted-host = extra.example\n[global]\nfind-links = /opt/wheels\n"
    )
    got = host.pip_index([first, second, tmp_path / "missing.conf"])
    assert got == host.PipIndex(
        index_url="https://first.example/simple",
        extra_index_urls=("https://extra.example/simple",),
        trusted_hosts=("extra.example",),
    )


TWICE = "[global]\nindex-url = https://a.example/simple\nindex-url = https://b.example/simple\n"
LATIN1 = "[global]\nindex-url = https://\xe9.example/simple\n".encode("latin-1")


@pytest.mark.parametrize(
    "text, reason",
    [
        ("not an ini file\n", "File contains no section headers"),
        (TWICE, "option 'index-url' in section 'global' already exists"),
        (LATIN1, "codec can't decode"),
    ],
)
def test_a_pip_config_pip_cannot_parse_stops_naming_the_file(tmp_path, text, reason):
    conf = tmp_path / "pip.conf"
    if isinstance(text, bytes):
        conf.write_bytes(text)
    else:
        conf.write_text(text)
    good = tmp_path / "good.conf"
    good.write_text("[global]\nindex-url = https://good.example/simple\n")
    with pytest.raises(MirrorError) as e:
        host.pip_index([good, conf])
    assert str(conf) in str(e.value) and reason in str(e.value)
    assert "\n" not in str(e.value) and "[pip] index_url" in str(e.value)


def test_the_user_s_pip_files_are_left_out_when_pip_config_file_names_one(tmp_path, monkeypatch):
    # as pip does: a broken ~/.config/pip/pip.conf that pip skips stops no build
    home = tmp_path / "home"
    (home / ".config/pip").mkdir(parents=True)
    (home / ".config/pip/pip.conf").write_text("not an ini file\n")
    given = tmp_path / "given.conf"
    given.write_text("[global]\nindex-url = https://given.example/simple\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_DIRS", str(tmp_path / "no-xdg"))
    monkeypatch.setenv("PIP_CONFIG_FILE", str(given))
    files = host.pip_config_files()
    assert files[-1] == given and home / ".config/pip/pip.conf" not in files
    assert host.pip_index(files).index_url == "https://given.example/simple"
    monkeypatch.setenv("PIP_CONFIG_FILE", str(tmp_path / "missing.conf"))  # pip reads them then
    assert home / ".config/pip/pip.conf" in host.pip_config_files()
    with pytest.raises(
        MirrorError, match=r"home/\.config/pip/pip\.conf is not a pip configuration"
    ):
        host.pip_index(host.pip_config_files())


def test_a_local_index_url_is_no_index(tmp_path):
    conf = tmp_path / "pip.conf"
    conf.write_text("[global]\nindex-url = file:///opt/pypi/simple\n")
    assert host.pip_index([conf]).index_url == ""


def test_pip_config_files_in_pips_order(monkeypatch, tmp_path):
    monkeypatch.setattr(host.places, "home", lambda: "/home/u")
    monkeypatch.setenv("XDG_CONFIG_DIRS", "/a:/b")
    monkeypatch.setenv("PIP_CONFIG_FILE", str(tmp_path / "env.conf"))
    assert [str(p) for p in host.pip_config_files()] == [
        "/b/pip/pip.conf",
        "/a/pip/pip.conf",
        "/etc/pip.conf",
        "/home/u/.pip/pip.conf",
        "/home/u/.config/pip/pip.conf",
        str(tmp_path / "env.conf"),
    ]
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    assert host.pip_config_files() == []


def test_ca_bundle_is_the_first_system_bundle_that_exists(monkeypatch, tmp_path):
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    bundle = tmp_path / "bundle.crt"
    bundle.write_text("x")
    monkeypatch.setattr(host, "CA_BUNDLES", (str(tmp_path / "none.crt"), str(bundle)))
    assert host.ca_bundle() == str(bundle)
    monkeypatch.setattr(host, "CA_BUNDLES", (str(tmp_path / "none.crt"),))
    assert host.ca_bundle() == ""


def test_ssl_cert_file_is_the_bundle_builds_trust(monkeypatch, tmp_path):
    """The user's SSL_CERT_FILE (a TLS-inspecting proxy's CA): what the push trusts, and
    what the builds get as `mirror-ca` in place of the system's."""
    bundle = tmp_path / "proxy-ca.pem"
    bundle.write_text("x")
    monkeypatch.setattr(host, "CA_BUNDLES", (str(tmp_path / "system.crt"),))
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    assert host.ca_bundle() == str(bundle)
