"""The rehearsal's stand-in upstream: its configuration, its lock, its mmdebstrap command.

The stand-in plays `rocm/dev-ubuntu-26.04:<ROCM_VERSION>` (the catalogue's
UPSTREAM_IMAGE) on hosts that cannot pull it: Debian sid with Debian's own
ROCm (the ROCm team's packages of ``rocm_suite``), laid out as AMD's image
(tools/rehearsal/layout.py). Two files in rehearsal/ describe it:

- ``upstream.toml``: the suites and the packages asked for;
- ``upstream.lock``: every package of the root file system with its version,
  as one Packages index of Debian's mirror resolved them (``lock.py`` writes
  it; the build installs exactly these and checks that it did).

mmdebstrap makes the root file system (``argv``): the same options resolve the
lock and build the image, so what was locked is what gets installed.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from tools.rehearsal import amdsmi

ROCM_TEAM = "Debian ROCm Team"  # the Maintainer of Debian's ROCm packages
ROCM_PIN_PRIORITY = 990
SOURCE_DATE_EPOCH = "0"
_NAME = re.compile(r"[a-z0-9][a-z0-9+.-]+")
_SUITE = re.compile(r"[a-z0-9][a-z0-9.-]*")


class StandInError(Exception):
    """A configuration or lock that cannot be used; the message names the file and the fix."""


@dataclass(frozen=True)
class Config:
    suite: str
    rocm_suite: str
    packages: tuple[str, ...]
    path: str = "upstream.toml"
    amd_smi: amdsmi.Pin | None = None  # [amd_smi]: AMD's Python package (tools/rehearsal/amdsmi.py)


@dataclass(frozen=True)
class Lock:
    suites: dict[str, str]  # suite -> the InRelease Date the lock was resolved against
    request: tuple[str, ...]  # the configuration's packages when it was made
    packages: dict[str, str]  # name -> version, every package of the root file system
    rocm: tuple[str, ...]  # the ROCm team's packages among them (from either suite)
    path: str = "upstream.lock"

    def includes(self) -> list[str]:
        """mmdebstrap --include values: every package at its locked version."""
        return [f"{name}={version}" for name, version in sorted(self.packages.items())]


def load_config(path: Path) -> Config:
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise StandInError(f"{path}: {e}") from None
    unknown = set(data) - {"suite", "rocm_suite", "packages", "amd_smi"}
    if unknown:
        raise StandInError(
            f"{path}: unknown keys {sorted(unknown)}; known: suite, rocm_suite, packages, amd_smi"
        )
    suite, rocm_suite = data.get("suite", ""), data.get("rocm_suite", "")
    packages = data.get("packages", [])
    for value, key in ((suite, "suite"), (rocm_suite, "rocm_suite")):
        if not isinstance(value, str) or not _SUITE.fullmatch(value):
            raise StandInError(f"{path}: {key} must be a Debian suite name like sid")
    if not packages or not all(isinstance(p, str) and _NAME.fullmatch(p) for p in packages):
        raise StandInError(f"{path}: packages must be a list of Debian package names")
    pin = None
    if "amd_smi" in data:
        try:
            pin = amdsmi.parse_pin(data["amd_smi"], str(path))
        except amdsmi.AmdSmiError as e:
            raise StandInError(str(e)) from None
    return Config(suite, rocm_suite, tuple(packages), str(path), pin)


def load_lock(path: Path) -> Lock:
    try:
        data = tomllib.loads(path.read_text())
        lock = Lock(
            suites=dict(data["suites"]),
            request=tuple(data["request"]["packages"]),
            packages=dict(data["packages"]),
            rocm=tuple(data["rocm"]["packages"]),
            path=str(path),
        )
    except FileNotFoundError:
        raise StandInError(f"{path} does not exist; write it: bazel run //rehearsal:lock") from None
    except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as e:
        raise StandInError(
            f"{path} cannot be read ({e}); write it again: bazel run //rehearsal:lock"
        ) from None
    return lock


def check_current(config: Config, lock: Lock) -> None:
    """The lock was made for this configuration; else StandInError naming the fix."""
    want = {config.suite, config.rocm_suite}
    if set(lock.request) != set(config.packages) or set(lock.suites) != want:
        asked, locked = set(config.packages), set(lock.request)
        raise StandInError(
            f"{lock.path} is stale: {config.path} asks for"
            f" {sorted(asked - locked) or 'no new'} packages and no longer for"
            f" {sorted(locked - asked) or 'none'} (suites {sorted(want)} vs {sorted(lock.suites)});"
            " write it again: bazel run //rehearsal:lock"
        )
    missing = [p for p in config.packages if p not in lock.packages]
    if missing:
        raise StandInError(
            f"{lock.path} lacks {missing}; write it again: bazel run //rehearsal:lock"
        )


def render_lock(lock: Lock, config: Config) -> str:
    lines = [
        "# The packages of the rehearsal's stand-in upstream, as one Packages index of",
        "# Debian's mirror resolved them. Generated: bazel run //rehearsal:lock",
        f"# (from {Path(config.path).name}); do not edit. The image build installs exactly",
        "# these versions and fails naming the ones the mirror no longer has.",
        "",
        "[suites]  # the InRelease Date of each suite resolved against",
    ]
    lines += [f'{suite} = "{date}"' for suite, date in sorted(lock.suites.items())]
    lines += ["", "[request]", "packages = ["]
    lines += [f'    "{p}",' for p in lock.request]
    lines += ["]", "", f"[rocm]  # {ROCM_TEAM}'s packages: to /opt/rocm-<release>", "packages = ["]
    lines += [f'    "{p}",' for p in sorted(lock.rocm)]
    lines += ["]", "", "[packages]"]
    lines += [f'"{name}" = "{version}"' for name, version in sorted(lock.packages.items())]
    return "\n".join(lines) + "\n"


def sources(config: Config, uri: str) -> str:
    """apt sources of the suites at ``uri`` (the mirror, or STANDIN_ARCHIVE in the image)."""
    return "".join(f"deb {uri} {suite} main\n" for suite in (config.suite, config.rocm_suite))


def preferences(config: Config, rocm: list[str] | tuple[str, ...]) -> str:
    """apt preferences: the ROCm team's packages from rocm_suite where it has them, the
    rest from suite (AMD's images pin their ROCm repository the same way)."""
    return (
        f"# {ROCM_TEAM}'s packages come from {config.rocm_suite} (ROCm 7.x);"
        f" the rest from {config.suite}.\n"
        f"Package: {' '.join(sorted(rocm))}\n"
        f"Pin: release a={config.rocm_suite}\n"
        f"Pin-Priority: {ROCM_PIN_PRIORITY}\n"
    )


def argv(
    config: Config,
    *,
    includes: list[str],
    preferences_dir: Path,
    aptopts: list[str] = (),
    hooks: list[str] = (),
    simulate: bool = False,
) -> list[str]:
    """The mmdebstrap command (sources come on stdin, the tar on stdout).

    ``preferences_dir`` holds the ROCm pin (apt reads it while resolving; the
    layout puts a copy in the image). ``aptopts`` are the mirror's (credentials,
    CA bundle, options): they reach apt here, and the layout removes the file
    mmdebstrap leaves them in, so none ships.
    """
    cmd = [
        "mmdebstrap",
        "--mode=root",
        "--variant=apt",
        "--format=tar",
        '--aptopt=Acquire::Check-Valid-Until "false"',
        '--aptopt=APT::Install-Recommends "false"',
        f'--aptopt=Dir::Etc::PreferencesParts "{preferences_dir}"',
        *[f"--aptopt={o}" for o in aptopts],
        # what Debian's and Ubuntu's container images leave out
        "--dpkgopt=path-exclude=/usr/share/man/*",
        "--dpkgopt=path-exclude=/usr/share/doc/*",
        "--dpkgopt=path-include=/usr/share/doc/*/copyright",
        "--dpkgopt=path-exclude=/usr/share/locale/*",
        "--include=" + ",".join(includes),
        *[f"--customize-hook={h}" for h in hooks],
    ]
    if simulate:
        cmd += ["--simulate", "--verbose"]
    return [*cmd, config.suite, "-", "-"]


def environment(tmp: Path) -> dict[str, str]:
    """mmdebstrap's whole environment: fixed, whoever runs it. The caller's would reach the
    maintainer scripts in the root file system (PYTHONDONTWRITEBYTECODE in a shell changes
    the .pyc files Debian's python3 writes, so the digest depended on who built it)."""
    return {
        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "SOURCE_DATE_EPOCH": SOURCE_DATE_EPOCH,
        "LC_ALL": "C.UTF-8",
        "HOME": "/root",
        "TMPDIR": str(tmp),
    }


INST = re.compile(r"^Inst (\S+) \((\S+) ")


def simulated_packages(output: str) -> dict[str, str]:
    """{name: version} of the `Inst` lines of ``mmdebstrap --simulate --verbose``."""
    found: dict[str, str] = {}
    for line in output.splitlines():
        m = INST.match(line)
        if m:
            found[m.group(1)] = m.group(2)
    return found


def rocm_release(rocm_version: str) -> str:
    """The numeric ROCm release of a tag, as /opt/rocm-<release> ("10.1.0-full" -> "10.1.0")."""
    release = rocm_version.split("-", 1)[0]
    if not re.fullmatch(r"[0-9]+(\.[0-9]+)*", release):
        raise StandInError(
            f"ROCM_VERSION {rocm_version!r} does not start with a release like 10.1.0"
        )
    return release
