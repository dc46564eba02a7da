"""lock: pin the rehearsal's stand-in upstream to one Packages index of Debian's mirror.

`bazel run //rehearsal:lock` (as root: mmdebstrap resolves in root
mode) reads rehearsal/upstream.toml, asks the mirror (the one the
mirror settings give the stand-in's archive: this host's Debian mirror by
default) for the InRelease of both suites and the ROCm team's packages of
rocm_suite, lets mmdebstrap resolve the root file system exactly as the
image build will (`--simulate`), and writes every package and version to
rehearsal/upstream.lock. Run it after editing upstream.toml, or when
a build says the mirror no longer has a locked version.
"""

from __future__ import annotations

import argparse
import lzma
import subprocess
import sys
import tempfile
from pathlib import Path

from tools import mirrors, places
from tools.envvars import SettingError
from tools.mirrors import fetch
from tools.rehearsal import standin
from tools.rehearsal.standin import StandInError


def mirror_uri(resolved: mirrors.Resolved) -> str:
    """The mirror the settings give the stand-in's archive."""
    for original, mirror in resolved.apt_rewrite:
        if original == mirrors.STANDIN_ARCHIVE:
            return mirror
    raise StandInError(
        f"the mirror settings map no mirror to the stand-in's archive {mirrors.STANDIN_ARCHIVE}"
        f" ({'; '.join(resolved.notes) or 'the settings file overrides it'}); map it in"
        " [apt.rewrite] to a Debian mirror (docs/mirrors.md)"
    )


def _fetch(resolved: mirrors.Resolved, url: str) -> bytes:
    try:
        return fetch.read(resolved, url)
    except OSError as e:
        raise StandInError(f"{url}: {e}; is the Debian mirror reachable?") from None


def release_date(resolved: mirrors.Resolved, mirror: str, suite: str) -> str:
    text = _fetch(resolved, f"{mirror}/dists/{suite}/InRelease").decode(errors="replace")
    for line in text.splitlines():
        if line.startswith("Date: "):
            return line.removeprefix("Date: ").strip()
    raise StandInError(f"{mirror}/dists/{suite}/InRelease has no Date field")


def rocm_team_packages(resolved: mirrors.Resolved, mirror: str, suite: str) -> set[str]:
    """The binary packages of ``suite`` whose Maintainer is Debian's ROCm team."""
    url = f"{mirror}/dists/{suite}/main/binary-amd64/Packages.xz"
    text = lzma.decompress(_fetch(resolved, url)).decode(errors="replace")
    names = set()
    for stanza in text.split("\n\n"):
        name = maintainer = ""
        for line in stanza.splitlines():
            if line.startswith("Package: "):
                name = line[9:].strip()
            elif line.startswith("Maintainer: "):
                maintainer = line[12:]
        if name and maintainer.startswith(standin.ROCM_TEAM):
            names.add(name)
    if not names:
        raise StandInError(f"{url} lists no package of the {standin.ROCM_TEAM}")
    return names


def resolve(config: standin.Config, resolved: mirrors.Resolved, log) -> standin.Lock:
    mirror = mirror_uri(resolved)
    suites = {s: release_date(resolved, mirror, s) for s in (config.suite, config.rocm_suite)}
    for suite, date in suites.items():
        print(f"lock: {mirror} {suite}: {date}", file=log)
    # pinned to rocm_suite where it has them; moved to /opt/rocm-<release> from either suite
    rocm = set().union(*(rocm_team_packages(resolved, mirror, s) for s in suites))
    with tempfile.TemporaryDirectory(prefix="rehearsal-lock-") as tmp:
        prefs = Path(tmp) / "preferences.d"
        prefs.mkdir()
        (prefs / "rocm.pref").write_text(standin.preferences(config, sorted(rocm)))
        cmd = standin.argv(
            config,
            includes=list(config.packages),
            preferences_dir=prefs,
            aptopts=fetch.apt_options(resolved),
            simulate=True,
        )
        print(f"lock: {' '.join(cmd[:3])} ... --simulate (resolving)", file=log, flush=True)
        proc = subprocess.run(
            cmd,
            input=standin.sources(config, mirror),
            capture_output=True,
            text=True,
            env=standin.environment(Path(tmp)),
            check=False,
        )
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-25:])
        raise StandInError(f"mmdebstrap could not resolve the packages:\n{tail}")
    packages = standin.simulated_packages(proc.stdout + proc.stderr)
    missing = [p for p in config.packages if p not in packages]
    if missing:
        raise StandInError(f"mmdebstrap resolved no version of {missing}")
    return standin.Lock(
        suites=suites,
        request=config.packages,
        packages=packages,
        rocm=tuple(sorted(n for n in packages if n in rocm)),
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="lock", description=__doc__.splitlines()[0])
    p.add_argument("--config", default="rehearsal/upstream.toml", help="%(default)s")
    p.add_argument("--output", default="rehearsal/upstream.lock", help="%(default)s")
    args = p.parse_args(argv)
    base = places.workspace()
    config_path, output = base / args.config, base / args.output
    try:
        config = standin.load_config(config_path)
        lock = resolve(config, mirrors.resolve(mirrors.load()), sys.stderr)
    except (StandInError, mirrors.MirrorError, SettingError) as e:
        print(f"lock: error: {e}", file=sys.stderr)
        return 1
    output.write_text(standin.render_lock(lock, config))
    print(
        f"lock: wrote {output} ({len(lock.packages)} packages, {len(lock.rocm)} of them"
        f" the ROCm team's from {config.rocm_suite})",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
