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


# --- [compiler_cache] ---------------------------------------------------------


def test_no_compiler_cache_table_is_the_local_ccache(settings_file):
    got = load('[pip]\nindex_url = "https://p.example/simple"\n', settings_file)
    assert got.compiler_cache == s.CompilerCache() and got.compiler_cache.backend == "local"
    assert not got.compiler_cache.remote


def test_a_compiler_cache_of_each_backend(settings_file, tmp_path):
    aws = tmp_path / "aws"
    aws.write_text("[default]\naws_access_key_id = A\naws_secret_access_key = B\n")
    key = tmp_path / "gcs.json"
    key.write_text('{"type": "service_account"}\n')
    login = tmp_path / "login"
    login.write_text("builder:pw\n")
    tables = {
        "none": "",
        "sccache-webdav": 'endpoint = "http://c.example:8080/sccache"\nkey_prefix = "rocm"\n'
        f'credentials = "{login}"\n',
        "sccache-s3": 'endpoint = "https://minio.example:9000"\nbucket = "cache"\n'
        f'region = "auto"\nkey_prefix = "rocm/x"\ncredentials = "{aws}"\n',
        "sccache-gcs": f'bucket = "cache"\ncredentials = "{key}"\n',
        "sccache-redis": f'endpoint = "rediss://r.example:6380"\ncredentials = "{login}"\n',
        "ccache-http": 'endpoint = "http://c.example:8080/ccache|layout=bazel|connect-timeout=50"\n',
    }
    for backend, rest in tables.items():
        got = load(f'[compiler_cache]\nbackend = "{backend}"\n{rest}', settings_file).compiler_cache
        assert got.backend == backend and got.remote == (backend != "none")
    assert got.endpoint == "http://c.example:8080/ccache|layout=bazel|connect-timeout=50"


def credential_files(tmp_path):
    files = {
        "aws": "[default]\naws_access_key_id = A\naws_secret_access_key = B\n",
        "login": "builder:pw\n",
        "two-lines": "builder:pw\nother:pw\n",
        "no-colon": "builder\n",
        "at-sign": "builder:p@ss\n",
        "not-json": "{not json\n",
    }
    tmp_path.mkdir(exist_ok=True)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return tmp_path


@pytest.mark.parametrize(
    "table, message",
    [
        # unknown key, with the key it is close to
        (
            'backend = "sccache-s3"\nbuckets = "b"',
            "[compiler_cache]: unknown key 'buckets'; did you mean 'bucket'?",
        ),
        # a backend that is none, with the one it is close to
        (
            'backend = "s3"',
            "[compiler_cache] backend 's3' is no backend; did you mean 'sccache-s3'?",
        ),
        (
            'backend = "sccache-webdev"',
            "did you mean 'sccache-webdav'?",
        ),
        (
            'backend = "ccache"',
            "did you mean 'ccache-http'?",
        ),
        # wrong types
        (
            "backend = 3",
            "[compiler_cache] backend must be a string",
        ),
        (
            'backend = "sccache-s3"\nendpoint = ["https://m.example"]\nbucket = "b"',
            "[compiler_cache] endpoint must be a string",
        ),
        # what a backend needs
        (
            'backend = "sccache-s3"\nendpoint = "https://m.example"',
            "backend 'sccache-s3' needs bucket, e.g. bucket = ",
        ),
        (
            'backend = "sccache-gcs"',
            "backend 'sccache-gcs' needs bucket",
        ),
        (
            'backend = "sccache-webdav"',
            "backend 'sccache-webdav' needs endpoint, e.g. endpoint = \"http://",
        ),
        (
            'backend = "ccache-http"',
            "needs endpoint, e.g. endpoint = "
            '"http://cache.example.internal:8080/ccache|layout=bazel"',
        ),
        # what a backend does not take
        (
            'backend = "local"\nendpoint = "http://c.example/"',
            "[compiler_cache] endpoint: backend 'local' takes no endpoint",
        ),
        (
            'backend = "none"\ncredentials = "/etc/hostname"',
            "backend 'none' takes no credentials",
        ),
        (
            'backend = "sccache-webdav"\nendpoint = "http://c.example/"\nbucket = "b"',
            "takes no bucket; it takes credentials, endpoint, key_prefix; remove bucket",
        ),
        (
            'backend = "sccache-gcs"\nbucket = "b"\nendpoint = "https://storage.example"',
            "sccache's GCS backend reaches storage.googleapis.com only",
        ),
        (
            'backend = "ccache-http"\nendpoint = "http://c.example/ccache"\nkey_prefix = "x"',
            "put the prefix there",
        ),
        # endpoints
        (
            'backend = "sccache-webdav"\nendpoint = "http://u:pw@c.example/sccache"',
            "[compiler_cache] endpoint: the URL has credentials in it; put them in the file "
            "[compiler_cache] credentials names",
        ),
        (
            'backend = "ccache-http"\nendpoint = "http://u:pw@c.example/ccache"',
            "has credentials in it",
        ),
        (
            'backend = "ccache-http"\nendpoint = "http://c.example/ccache|bearer-token=t0k"',
            "the endpoint has a bearer-token; put them in the file",
        ),
        (
            'backend = "sccache-webdav"\nendpoint = "c.example:8080"',
            "is not a http:// / https:// URL; write the whole URL, e.g. "
            "http://cache.example.internal:8080/sccache",
        ),
        (
            'backend = "sccache-redis"\nendpoint = "http://r.example:6379"',
            "is not a redis:// / rediss:// URL",
        ),
        (
            'backend = "sccache-redis"\nendpoint = "redis://r.example:6379/2"',
            "give redis://HOST[:PORT] only",
        ),
        (
            'backend = "ccache-http"\nendpoint = "https://c.example/ccache"',
            "ccache's http backend speaks no HTTPS",
        ),
        (
            'backend = "ccache-http"\nendpoint = "http://c.example/ccache|layot=bazel"',
            "'layot=bazel' is not an attribute of ccache's http backend; did you mean 'layout'?",
        ),
        (
            'backend = "ccache-http"\nendpoint = "http://c.example/ccache|layout=tree"',
            "layout=tree is no layout",
        ),
        (
            'backend = "sccache-s3"\nendpoint = "https:///"\nbucket = "b"',
            "has no valid host",
        ),
        # names
        (
            'backend = "sccache-s3"\nendpoint = "https://m.example"\nbucket = "my bucket"',
            "'my bucket' is not a bucket name",
        ),
        (
            'backend = "sccache-s3"\nendpoint = "https://m.example"\nbucket = "b"\nregion = '
            '"us east"',
            "'us east' is not a region",
        ),
        (
            'backend = "sccache-webdav"\nendpoint = "http://c.example/"\nkey_prefix = "a b"',
            "key_prefix: 'a b' may hold",
        ),
        # the credentials file
        (
            'backend = "sccache-webdav"\nendpoint = "http://c.example/"\ncredentials = '
            '"{dir}/missing"',
            "[compiler_cache] credentials: {dir}/missing does not exist",
        ),
        (
            'backend = "sccache-webdav"\nendpoint = "http://c.example/"\ncredentials = "login"',
            "'login' is not an absolute path",
        ),
        (
            'backend = "sccache-webdav"\nendpoint = "http://c.example/"\ncredentials = "{dir}"',
            "[compiler_cache] credentials: cannot read {dir}: Is a directory",
        ),
        (
            'backend = "sccache-webdav"\nendpoint = "http://c.example/"\ncredentials = '
            '"{dir}/two-lines"',
            "must hold one line, user:password",
        ),
        (
            'backend = "sccache-redis"\nendpoint = "redis://r.example"\ncredentials = '
            '"{dir}/no-colon"',
            "must hold one line, user:password",
        ),
        (
            'backend = "ccache-http"\nendpoint = "http://c.example/"\ncredentials = '
            '"{dir}/at-sign"',
            "may not hold @ / | ? # or blanks",
        ),
        (
            'backend = "sccache-s3"\nendpoint = "https://m.example"\nbucket = "b"\ncredentials '
            '= "{dir}/login"',
            "is not an AWS shared-credentials file",
        ),
        (
            'backend = "sccache-gcs"\nbucket = "b"\ncredentials = "{dir}/not-json"',
            "is not a GCS key file (JSON)",
        ),
        # the table itself
        (
            'compiler_cache = "sccache-s3"',
            "compiler_cache must be a table ([compiler_cache])",
        ),
    ],
)
def test_compiler_cache_refusals_name_the_key_and_the_fix(settings_file, tmp_path, table, message):
    files = credential_files(tmp_path / "creds")
    text = table if table.startswith("compiler_cache") else f"[compiler_cache]\n{table}\n"
    settings_file.write_text(text.replace("{dir}", str(files)))
    with pytest.raises(MirrorError) as e:
        s.load()
    assert message.replace("{dir}", str(files)) in str(e.value)
    assert str(settings_file) in str(e.value)
    # the credentials' content is never in a message
    assert "pw" not in str(e.value).replace(str(settings_file), "")
