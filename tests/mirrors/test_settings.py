"""The mirror settings file: defaults, what a file adds, and every refusal."""

from __future__ import annotations

import pytest

from tools.mirrors import settings as s
from tools.mirrors.settings import HOST, STANDIN_ARCHIVE, MirrorError


def load(text: str, file):
    file.write_text(text)
    return s.load(file)


def test_no_file_means_the_defaults(no_settings):
    assert not no_settings.exists()
    got = s.load()
    assert got == s.DEFAULTS
    assert got.apt_rewrite == {STANDIN_ARCHIVE: HOST}
    assert got.pip_index_url == HOST and got.ca_bundle == HOST and got.netrc == ""


def test_default_location_is_the_accounts_config_dir(monkeypatch):
    monkeypatch.delenv(s.ENV, raising=False)
    monkeypatch.setattr(s.places, "home", lambda: "/home/builder")
    assert str(s.path()) == "/home/builder/.config/rocm-pytorch-images/mirrors.toml"


def test_env_naming_a_missing_file_is_an_error(settings_file):
    with pytest.raises(MirrorError, match=r"ROCM_PYTORCH_MIRRORS=.*does not exist"):
        s.load()


def test_a_file_adds_to_the_defaults_and_wins_on_its_keys(settings_file, netrc_file, ca_file):
    got = load(
        f"""
[apt.rewrite]
"http://archive.ubuntu.com/ubuntu" = "http://apt.example.internal/ubuntu"
"{STANDIN_ARCHIVE}" = "http://127.0.0.1:3142/debian"
[apt.options]
"Acquire::Check-Valid-Until" = "false"
[pip]
index_url = "https://pypi.example.internal/simple"
extra_index_urls = ["https://wheels.example.internal/simple"]
trusted_hosts = ["wheels.example.internal:8443"]
[git.rewrite]
"https://github.com/" = "https://git.example.internal/github/"
[auth]
netrc = "{netrc_file}"
[tls]
ca_bundle = "{ca_file}"
""",
        settings_file,
    )
    assert got.apt_rewrite == {
        "http://archive.ubuntu.com/ubuntu": "http://apt.example.internal/ubuntu",
        STANDIN_ARCHIVE: "http://127.0.0.1:3142/debian",
    }
    assert got.apt_options == {"Acquire::Check-Valid-Until": "false"}
    assert got.pip_index_url == "https://pypi.example.internal/simple"
    assert got.pip_extra_index_urls == ("https://wheels.example.internal/simple",)
    assert got.pip_trusted_hosts == ("wheels.example.internal:8443",)
    assert got.git_rewrite == {"https://github.com/": "https://git.example.internal/github/"}
    assert got.netrc == str(netrc_file) and got.ca_bundle == str(ca_file)
    assert got.source == str(settings_file)


@pytest.mark.parametrize(
    "text, message",
    [
        ("[apt]\nrewrites = {}\n", "unknown key 'rewrites'; did you mean 'rewrite'?"),
        ("[pypi]\nindex_url = 'x'\n", "unknown key 'pypi'; did you mean 'pip'?"),
        ("apt = 1\n", "apt must be a table ([apt])"),
        ("[apt]\nrewrite = 'x'\n", "[apt.rewrite] must be a table of strings"),
        ("[pip]\nextra_index_urls = 'https://a/simple'\n", "extra_index_urls must be a list"),
        ("[pip]\nindex_url = 3\n", "[pip] index_url must be a string"),
        ("[pip\n", "not valid TOML"),
        (
            '[apt.rewrite]\n"http://archive.ubuntu.com/ubuntu" = "apt.example.internal/ubuntu"\n',
            "is not a http:// / https:// / file:// URL",
        ),
        (
            '[pip]\nindex_url = "https://user:pw@pypi.example.internal/simple"\n',
            "the URL has credentials in it; put them in the netrc file ([auth] netrc)",
        ),
        (
            '[git.rewrite]\n"https://github.com/" = "https://tok@git.example.internal/"\n',
            "has credentials in it",
        ),
        ('[pip]\nindex_url = "https:///simple"\n', "has no valid host"),
        ('[pip]\nindex_url = "https://a b/simple"\n', "is not a URL (empty or has spaces)"),
        ('[pip]\ntrusted_hosts = ["http://host"]\n', "is not a HOST[:PORT]"),
        ('[apt.options]\n"Acquire::Retries=3" = "1"\n', "is not an apt option name"),
        ('[apt.options]\n"Acquire::Retries" = "1\\"\\n"\n', "may not hold quotes or newlines"),
        (
            '[git.rewrite]\n"https://github .com/" = "https://git.example.internal/"\n',
            "is not a URL prefix",
        ),
        (
            '[auth]\nnetrc = "/nonexistent/mirrors.netrc"\n',
            "/nonexistent/mirrors.netrc does not exist",
        ),
        ('[tls]\nca_bundle = "/nonexistent/ca.pem"\n', "cannot read /nonexistent/ca.pem"),
        ('[rust]\ndist_server = "rust.example.internal"\n', "[rust] dist_server: "),
        (
            '[rust]\ncrates_registry = "sparse+https://u:p@crates.example.internal/"\n',
            "[rust] crates_registry: the URL has credentials in it",
        ),
        ('[rust]\ncrate_registry = "x"\n', "did you mean 'crates_registry'?"),
    ],
)
def test_refusals_name_the_key_and_the_fix(settings_file, text, message):
    settings_file.write_text(text)
    with pytest.raises(MirrorError) as e:
        s.load()
    assert message in str(e.value)
    assert str(settings_file) in str(e.value)


def test_a_netrc_that_does_not_parse(settings_file, tmp_path):
    bad = tmp_path / "bad.netrc"
    bad.write_text("machine\n")
    settings_file.write_text(f'[auth]\nnetrc = "{bad}"\n')
    with pytest.raises(MirrorError, match="is not a netrc file"):
        s.load()


def test_a_ca_bundle_without_certificates(settings_file, tmp_path):
    bad = tmp_path / "ca.pem"
    bad.write_text("not a certificate\n")
    settings_file.write_text(f'[tls]\nca_bundle = "{bad}"\n')
    with pytest.raises(MirrorError, match="holds no PEM certificate"):
        s.load()


def test_empty_values_turn_a_default_off(settings_file):
    got = load('[pip]\nindex_url = ""\n[tls]\nca_bundle = ""\n', settings_file)
    assert got.pip_index_url == "" and got.ca_bundle == ""


def test_rust_mirrors_take_cargos_sparse_registries(settings_file):
    settings_file.write_text(
        '[rust]\ndist_server = "https://rust.example.internal"\n'
        'crates_registry = "sparse+https://crates.example.internal/index/"\n'
    )
    got = s.load()
    assert got.rust_dist_server == "https://rust.example.internal"
    assert got.rust_crates_registry == "sparse+https://crates.example.internal/index/"
    # no [rust]: rustup's and cargo's defaults (no secret is rendered)
    assert s.DEFAULTS.rust_dist_server == s.DEFAULTS.rust_crates_registry == ""
