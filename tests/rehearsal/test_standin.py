"""The stand-in's configuration and lock (tools/rehearsal/standin.py): no network, no root."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.rehearsal import standin
from tools.rehearsal.standin import StandInError

CONFIG = Path("rehearsal/upstream.toml")  # runfiles paths (cwd = runfiles root)
LOCK = Path("rehearsal/upstream.lock")


def test_the_checked_in_lock_is_current_for_the_checked_in_config():
    # A package added to upstream.toml without `bazel run //rehearsal:lock` fails here.
    config, lock = standin.load_config(CONFIG), standin.load_lock(LOCK)
    standin.check_current(config, lock)
    assert set(lock.suites) == {config.suite, config.rocm_suite}
    assert set(lock.rocm) <= set(lock.packages)
    assert {
        "hipcc",
        "librocblas5",
        "libhipblaslt1",
        "librocsolver0",
        "libmiopen1",
        "librccl1",
    } <= set(lock.rocm)


def test_the_lock_renders_back_to_itself():
    config, lock = standin.load_config(CONFIG), standin.load_lock(LOCK)
    assert standin.render_lock(lock, config) == LOCK.read_text()


def write(tmp_path, text: str, name: str = "upstream.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "text, message",
    [
        ('suite = "sid"\nrocm_suite = "experimental"\npackages = []\n', "packages must be a list"),
        (
            'suite = "Sid!"\nrocm_suite = "experimental"\npackages = ["a1"]\n',
            "suite must be a Debian suite",
        ),
        (
            'suite = "sid"\nrocm_suite = "experimental"\npackages = ["A b"]\n',
            "packages must be a list",
        ),
        (
            'suite = "sid"\nrocm_suite = "x"\npackages = ["a1"]\nextra = 1\n',
            "unknown keys ['extra']",
        ),
        ("suite = [\n", "upstream.toml"),
    ],
)
def test_bad_configs(tmp_path, text, message):
    with pytest.raises(StandInError, match=message.replace("[", r"\[").replace("]", r"\]")):
        standin.load_config(write(tmp_path, text))


def test_a_missing_or_broken_lock_says_how_to_write_it(tmp_path):
    with pytest.raises(StandInError, match=r"does not exist; write it: bazel run //rehearsal:lock"):
        standin.load_lock(tmp_path / "none.lock")
    with pytest.raises(StandInError, match=r"cannot be read .*bazel run //rehearsal:lock"):
        standin.load_lock(write(tmp_path, "[suites]\n", "x.lock"))


def test_a_stale_lock_names_what_changed():
    config, lock = standin.load_config(CONFIG), standin.load_lock(LOCK)
    changed = standin.Config(
        config.suite, config.rocm_suite, (*config.packages, "libhipfft-doc"), "upstream.toml"
    )
    with pytest.raises(StandInError, match=r"is stale: upstream.toml asks for \['libhipfft-doc'\]"):
        standin.check_current(changed, lock)


def test_includes_pin_every_package():
    lock = standin.Lock({"sid": "d"}, ("b",), {"b": "1.0", "a": "2:3-1"}, ())
    assert lock.includes() == ["a=2:3-1", "b=1.0"]


def test_mmdebstrap_command(tmp_path):
    config = standin.Config("sid", "experimental", ("hipcc",))
    cmd = standin.argv(
        config,
        includes=["hipcc=7"],
        preferences_dir=tmp_path,
        aptopts=['Acquire::https::CAInfo "/ca.pem"'],
        hooks=['layout.py "$1"'],
    )
    assert cmd[:3] == ["mmdebstrap", "--mode=root", "--variant=apt"]
    assert f'--aptopt=Dir::Etc::PreferencesParts "{tmp_path}"' in cmd
    assert '--aptopt=Acquire::https::CAInfo "/ca.pem"' in cmd
    assert "--include=hipcc=7" in cmd and '--customize-hook=layout.py "$1"' in cmd
    assert cmd[-3:] == ["sid", "-", "-"] and "--simulate" not in cmd
    assert standin.argv(config, includes=[], preferences_dir=tmp_path, simulate=True)[-5:-3] == [
        "--simulate",
        "--verbose",
    ]


def test_sources_and_preferences():
    config = standin.Config("sid", "experimental", ("hipcc",))
    assert standin.sources(config, "http://m/debian") == (
        "deb http://m/debian sid main\ndeb http://m/debian experimental main\n"
    )
    prefs = standin.preferences(config, ["librocblas5", "hipcc"])
    assert "Package: hipcc librocblas5\nPin: release a=experimental\nPin-Priority: 990\n" in prefs


def test_simulated_packages_reads_the_inst_lines():
    output = (
        "I: simulate installing...\n"
        "Inst libc6 (2.43-7 Debian:unstable [amd64]) []\n"
        "Inst hipcc (7.2.4+dfsg-1~exp1 Debian:experimental [amd64])\n"
        "Conf hipcc (7.2.4+dfsg-1~exp1 Debian:experimental [amd64])\n"
        "Inst libc6 (2.43-7 Debian:unstable [amd64]) []\n"
    )
    assert standin.simulated_packages(output) == {"libc6": "2.43-7", "hipcc": "7.2.4+dfsg-1~exp1"}


@pytest.mark.parametrize(
    "tag, release", [("9.8.7-full", "9.8.7"), ("7.2", "7.2"), ("6.4.3-complete", "6.4.3")]
)
def test_rocm_release(tag, release):
    assert standin.rocm_release(tag) == release


def test_rocm_release_refuses_a_tag_without_one():
    with pytest.raises(StandInError, match=r"does not start with a release like 10\.1\.0"):
        standin.rocm_release("latest")
