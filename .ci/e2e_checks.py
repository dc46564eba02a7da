"""Checks of the fixture family that need Bazel itself (run by .ci/run).

A test cannot run the Bazel that runs it, so these run after
`bazel test //tests/...`, against the same output base. The family's builds
here use the reproducible output (`--reproducible`, as
`--config=release`), which the digest comparisons need:

- `--define arch=gfx950,gfx1201` builds the family (as many images as tagconf
  renders for the catalogue's targets and those archs: every count here is the
  catalogue's, never a number written down); a second build executes no action;
  Bazel holds descriptors only (under 1 MB for the family);
- changing `--image_registry=` or `--define VCS_REF=` executes no ImageBuild;
- `bazel aquery` shows one ImageBuild action for each arch-free target
  whatever the archs, and every ImageBuild action is local and uncached,
  with no environment but Bazel's fixed PATH in its key;
- an unknown `--define arch` fails analysis and lists the known archs; so
  do a misspelled or unknown `--define` key (`group=`), a bad
  `--image_registry=`, and running `//tests/e2e:push_all` (no all group), each in one line
  without a Starlark traceback; asking
  aiter-wheel (gfx942, gfx950 only) for gfx1201 fails analysis in one line
  (its push refuses an empty plan), and push_default.plan for gfx1201 leaves
  it out and says so;
- the real family analyses for all the catalogue's archs and arch families, its
  push_default.plan is exactly tagconf's tags, and `--config=release` adds the -g<sha>
  tags (one per image of the default group);
  push_default.help has no ImageBuild or ImageSpec action under it, and
  `bazel run //images:push_default -- --help` prints that help and builds no image;
- an image past its size budget (tests/e2e:rocm-runtime.over_budget, the fixture's
  rocm-runtime against budgets_exceeded.toml) fails the build in one line naming the
  image, its size, the budget and the excess;
- the fixture family's report (`//tests/e2e:report`, offline) holds its images and
  holds up in headless chromium (.ci/report_check.py, tests/report:check_page);
- `--cache_registry` exports BuildKit's cache where prune-cache finds it;
- `--config=release` publishes the fixture family signed (cosign, a key made
  here), with SBOM and provenance attached; `.verify` passes; a second
  publish writes nothing; a tag moved to the other arch's (also signed)
  image fails `.verify`, naming the ref;
- two engines (tests/e2e/two_engines.py): `--builders=gfx1201=<context
  of a second engine>` builds each image on its engine (BuildKit history) with
  the one-engine digests and the same push plan; a dead builder fails fast
  and `--keep_going` completes the other arch;
- after `bazel clean` the rebuild is a staging hit per image (no BuildKit
  build) with the same digests;
- after `bazel clean` and `docker buildx prune -af` a rebuild into another
  staging registry gives the same manifest digests (reproducible builds); it
  prunes only the engine .ci/run started, never the one a build host works with.

Prints `PASS: ...`/`FAIL: ...` per check, then `e2e checks: N passed, M failed`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root
sys.path.insert(0, str(Path(__file__).resolve().parent))  # .ci: report_check

import report_check

from tests.e2e import two_engines
from tools import client_env
from tools.process.scratch_bazel import Checks
from tools.registry.sign import find_cosign
from tools.tagconf import catalog as catalog_mod
from tools.tagconf.spec import cache_ref
from tools.tagconf.tags import render_tags, resolve_values

ARCHS = two_engines.ARCHS
FAMILY = two_engines.FAMILY
# The real catalogue (the fixture family's too): the archs, families, groups and tags the
# checks expect are read from it (tools/tagconf, standard library only).
CATALOG = catalog_mod.load(two_engines.CATALOG)
# The fixture family's images for ARCHS: every target for each arch it is built for, and
# the arch-free targets once (aiter-wheel has no gfx1201 image).
IMAGES = len(two_engines.images())
# The family builds here in the reproducible output mode (`--config=release`'s): the
# checks compare digests across engines and across a clean rebuild. `bazel test` built it
# in the plain mode (no define) before.
REPRODUCIBLE = two_engines.REPRODUCIBLE


def bazel(
    *args: str, check: bool = True, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    cmd = ["bazel", *args]
    full_env = {**os.environ, **env} if env else None
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env=full_env)
    if check and proc.returncode != 0:
        sys.stderr.write(proc.stderr[-4000:])
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}")
    return proc


def _args():
    import argparse

    parser = argparse.ArgumentParser(
        prog="python3 .ci/e2e_checks.py",
        description="The end-to-end checks that need Bazel itself (run by .ci/run e2e):"
        " real builds of the fixture family, pushes to $REGISTRY, analysis errors."
        " Needs the engine's environment (python3 -m tools.engine env --private --registry).",
    )
    parser.add_argument(
        "--only",
        action="append",
        metavar="TEXT",
        help="run only the checks whose name holds TEXT (repeat); a check may need the"
        " family an earlier one builds",
    )
    return parser.parse_args()


# `python3 .ci/e2e_checks.py`'s options; imported (tests/house), the module reads none
check = Checks(only=_args().only if __name__ == "__main__" else None)


def executed_actions(stderr: str) -> int:
    """Actions Bazel really ran (its 'N processes: M internal, ...' line)."""
    m = re.search(r"INFO: (\d+) process(?:es)?: (.*)", stderr)
    if not m:
        raise AssertionError("no process summary in Bazel's output")
    internal = re.search(r"(\d+) internal", m.group(2))
    return int(m.group(1)) - (int(internal.group(1)) if internal else 0)


BEFORE: dict[str, str] = {}


@check("family builds for two archs")
def _build():
    bazel("build", FAMILY, f"--define=arch={ARCHS}", REPRODUCIBLE)
    BEFORE.update(two_engines.digests())
    assert len(BEFORE) == IMAGES, f"{len(BEFORE)} images built, tagconf renders {IMAGES}"
    return f"{len(BEFORE)} images"


@check("second build executes zero actions")
def _noop():
    proc = bazel("build", FAMILY, f"--define=arch={ARCHS}", REPRODUCIBLE)
    n = executed_actions(proc.stderr)
    assert n == 0, f"{n} actions executed"


def image_outputs() -> list[str]:
    proc = bazel(
        "cquery",
        f"kind(rocm_image_rule, deps({FAMILY}))",
        f"--define=arch={ARCHS}",
        REPRODUCIBLE,
        "--output=files",
    )
    return [p for p in proc.stdout.split() if os.path.exists(p)]


@check("bazel-bin holds descriptors, not image bytes (< 1 MB for the family)")
def _descriptors_only():
    paths = image_outputs()
    dirs = [p for p in paths if os.path.isdir(p)]
    assert not dirs, f"image rules wrote directories: {dirs[:3]}"
    total = sum(os.path.getsize(p) for p in paths)
    assert total < 1_000_000, f"{total} bytes"
    return f"{len(paths)} files, {total / 1000:.1f} kB"


def spawns(*args: str) -> Counter:
    """Mnemonics of the spawns a build executed (Bazel's execution log)."""
    log = os.path.abspath(".ci/.cache/exec-log.json")
    bazel("build", *args, f"--execution_log_json_file={log}")
    text = open(log).read()
    return Counter(m for m in re.findall(r'"mnemonic": "([^"]+)"', text))


@check("--image_registry= / VCS_REF= changes execute no image build")
def _publish_change_rebuilds_nothing():
    changed = spawns(
        FAMILY,
        f"--define=arch={ARCHS}",
        REPRODUCIBLE,
        # a registry that answers: the push targets' RegistryCheck asks it for a write
        f"--image_registry={os.environ['REGISTRY']}/elsewhere",
        "--define=VCS_REF=1a2b3c4",
    )
    assert changed["ImageBuild"] == 0, f"{changed['ImageBuild']} ImageBuild actions ran"
    assert changed["ImageSpec"] > 0, "the specs (tags) were not re-rendered"
    assert changed["RegistryCheck"] > 0, "the push targets did not check the registry"
    return (
        f"ImageSpec {changed['ImageSpec']}, ImageBuild 0, RegistryCheck {changed['RegistryCheck']}"
    )


@check("the family report renders in headless chromium: graph, budgets, plots, no fetch")
def _report():
    out = Path(".ci/.cache/report-e2e.html").absolute()
    return report_check.check_family_report(
        bazel,
        "//tests/e2e:report",
        [f"--define=arch={ARCHS}", REPRODUCIBLE],
        out,
        IMAGES,
        ("--offline",),
    )


@check("the size gate on the fixture family's report: a grown image fails, a raised budget passes")
def _size_gate():
    proc = bazel(
        "run",
        "//tests/e2e:report",
        f"--define=arch={ARCHS}",
        REPRODUCIBLE,
        "--",
        "--offline",
        "--json",
        "--out",
        str(Path(".ci/.cache/report-gate.html").absolute()),
    )
    work = Path(tempfile.mkdtemp(prefix="e2e-gate-"))
    now = work / "now.json"
    now.write_text(proc.stdout)
    model = json.loads(proc.stdout)
    grown = max(model["images"], key=lambda i: i["size"])  # the largest: a real change
    main = json.loads(proc.stdout)
    for image in main["images"]:
        if image["id"] == grown["id"]:
            image["size"] = int(image["size"] / 1.10)  # it grew 10 % since main
    baseline = work / "main.json"
    baseline.write_text(json.dumps(main))

    def delta(base: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "tools.report.delta",
                "--report",
                str(now),
                "--baseline",
                str(base),
                "--out",
                str(work / "delta.md"),
            ],
            capture_output=True,
            text=True,
            check=False,
        )

    failed = delta(baseline)
    assert failed.returncode == 1, failed.stdout[-2000:] + failed.stderr
    fails = [line for line in failed.stdout.splitlines() if line.startswith("FAIL: ")]
    assert len(fails) == 1 and fails[0].startswith(f"FAIL: {grown['id']} grew +"), fails
    assert "past the gate of 5 % or 200 MiB" in fails[0], fails[0]
    for image in main["images"]:
        if image["id"] == grown["id"]:
            image["budget_bytes"] = (image["budget_bytes"] or 0) // 2  # raised in this change
    baseline.write_text(json.dumps(main))
    passed = delta(baseline)
    assert passed.returncode == 0, passed.stdout[-2000:] + passed.stderr
    assert f"| {grown['id']} |" in (work / "delta.md").read_text()
    return f"{grown['id']} +10 %: {fails[0][6:80]}...; budget raised: passes"


@check("an image past its size budget fails the build in one line with the excess")
def _over_budget():
    proc = bazel("build", "//tests/e2e:rocm-runtime.over_budget", check=False)
    assert proc.returncode != 0, "the build passed"
    lines = [line for line in proc.stderr.splitlines() if "image over budget" in line]
    assert len(lines) == 1, proc.stderr[-2000:]
    want = re.compile(
        r"tagconf: error: image over budget: //tests/e2e:rocm-runtime\.over_budget"
        r" \(rocm-runtime, gfx950\) is [\d.,]+ MiB \([\d,]+ bytes\), its budget 0\.5 MiB"
        r" \(tests/e2e/budgets_exceeded\.toml budget_mib\.rocm-runtime\): [\d.,]+ MiB over;"
    )
    assert want.match(lines[0]), lines[0]
    return lines[0].split(": ", 2)[2]


@check("a family over its budget still gets its report, then the report fails naming it")
def _over_budget_report():
    page = Path(tempfile.mkdtemp(prefix="e2e-over-")) / "report.html"
    proc = bazel(
        "run", "//tests/e2e:report.over_budget", "--", "--offline", "--out", str(page),
        check=False,
    )  # fmt: skip
    assert proc.returncode != 0, "the report passed"
    assert page.is_file(), proc.stderr[-2000:]
    assert 'class="node over"' in page.read_text(), "the page does not mark it"
    line = next(x for x in proc.stderr.splitlines() if x.startswith("registry: error:"))
    assert "1 image over budget: rocm-runtime.gfx950 (" in line, line
    return line.removeprefix("registry: error: ")


@check("aquery: arch-free targets have one build action; docker actions are local")
def _aquery():
    proc = bazel(
        "aquery",
        "mnemonic(ImageBuild, deps(//tests/e2e:vllm))",
        f"--define=arch={ARCHS}",
        REPRODUCIBLE,
        "--output=jsonproto",
    )
    graph = json.loads(proc.stdout)
    labels = {t["id"]: t["label"] for t in graph.get("targets", [])}
    per_label = Counter(labels[a["targetId"]] for a in graph["actions"])
    assert per_label["//tests/e2e:triton-wheel"] == 1, per_label["//tests/e2e:triton-wheel"]
    assert per_label["//tests/e2e:pytorch-src"] == 1, per_label["//tests/e2e:pytorch-src"]
    assert per_label["//tests/e2e:pytorch.gfx950"] == 1
    for action in graph["actions"]:
        assert "--reproducible" in action["arguments"], "--reproducible not passed"
        info = {kv["key"]: kv["value"] for kv in action.get("executionInfo", [])}
        for key in ("local", "no-remote", "no-remote-cache"):
            assert key in info, f"{labels[action['targetId']]} lacks {key}"
        # where this machine's engine, docker config, staging and mirrors are is in
        # no action key (tools/client_env.py), and PATH is Bazel's fixed one
        env = {kv["key"]: kv["value"] for kv in action.get("environmentVariables", [])}
        assert set(env) <= {"PATH"}, f"{labels[action['targetId']]} keys on {sorted(env)}"
        assert env.get("PATH", "/bin:/usr/bin:/usr/local/bin") == "/bin:/usr/bin:/usr/local/bin"
        # ... but by the path of the file the repository rule wrote, the same string on
        # every machine (images/private/client_settings.bzl)
        argv = action["arguments"]
        assert "--client-settings" in argv, f"{labels[action['targetId']]}: no --client-settings"
        given = argv[argv.index("--client-settings") + 1]
        assert given == client_env.BAZEL_FILE, (
            f"{labels[action['targetId']]}: --client-settings {given}"
        )
    # (embedded staging: loopback blobs, so descriptors stay out of every cache)
    return (
        f"{len(graph['actions'])} ImageBuild actions in the graph, triton-wheel: 1;"
        " environment: PATH only; client settings: their file's path"
    )


@check("unknown --define arch fails analysis naming the closest arch and listing the known ones")
def _unknown_arch():
    proc = bazel("build", "--nobuild", "//tests/e2e:pytorch", "--define=arch=gfx951", check=False)
    assert proc.returncode != 0, "analysis succeeded"
    want = (
        '--define arch=gfx951: unknown arch or family "gfx951"; did you mean "gfx950"? known'
        f" archs: {', '.join(CATALOG.archs)} (or all); families: "
    )
    assert want in proc.stderr, proc.stderr[-2000:]


@check(
    "a misspelled, unknown or moved --define and a bad setting fail analysis in one line,"
    " building nothing; push_all fails in one line"
)
def _bad_defines():
    proc = bazel("build", "//tests/e2e:push_default", "--define=PYTORCH_VERION=2.16.0", check=False)
    assert proc.returncode != 0, "analysis succeeded"
    assert (
        "PYTORCH_VERION is neither a catalogue key nor an optional build arg; did you mean"
        " PYTORCH_VERSION?" in proc.stderr
    )
    proc = bazel("run", "//tests/e2e:push_default.plan", "--image_registry=h:5/UP", check=False)
    assert proc.returncode != 0, "analysis succeeded"
    assert 'bad namespace component "UP"' in proc.stderr, proc.stderr[-1000:]
    assert "Building image" not in proc.stderr
    # a key nobody reads is no longer ignored, a moved one names its flag, a setting's bad
    # value is refused by the setting's own target: each error is one line, no traceback,
    # from a target declared by no macro (no "Since this rule was created by the macro
    # ..." remark), once for every configuration of the build
    defines = "define_check rule //images:defines"
    for args, want, where in [
        (
            ["//tests/e2e:push_default", "--define=group=nosuch"],
            "in --define group=nosuch: unknown key group; known keys: arch, the catalogue's",
            defines,
        ),
        (
            ["//tests/e2e:pytorch", "--define=arch=gfx951"],
            "in --define arch=gfx951: unknown arch",
            defines,
        ),
        (
            ["//tests/e2e:push_default", "--define=sign=1"],
            "in --define sign=1: sign is a build setting now; write --sign --",
            defines,
        ),
        (
            ["//tests/e2e:push_default", "--upstream=rehersal"],
            "in --upstream=rehersal: unknown value; did you mean rehearsal?",
            "rule //images/settings:upstream",
        ),
        (
            ["//tests/e2e:push_default", "--builders=gfx951=a"],
            'in --builders=gfx951=a: unknown arch "gfx951"; did you mean gfx950?',
            "rule //images/settings:builders",
        ),
    ]:
        proc = bazel("build", "--nobuild", "--keep_going", *args, check=False)
        assert proc.returncode != 0, f"{args}: analysis succeeded"
        assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
        lines = [line for line in proc.stderr.splitlines() if want in line]
        assert len(lines) == 1 and lines[0].startswith("ERROR: "), proc.stderr[-2000:]
        assert where in lines[0], lines[0]
        assert "created by the macro" not in proc.stderr, proc.stderr[-2000:]
    proc = bazel("build", "--nobuild", "//tests/e2e:push_default", "--sign=maybe", check=False)
    assert "'maybe' is not a boolean" in proc.stderr, proc.stderr[-2000:]
    # push_all runs and fails in one line (a script: queries over the package still work)
    proc = bazel("run", "//tests/e2e:push_all", check=False)
    want = (
        "error: //tests/e2e:push_all: there is no `all` group, on purpose (a target outside"
        " every group, e.g. pytorch-test, is never pushed by accident); known groups:"
        f" {', '.join(CATALOG.groups)}; push one with bazel run //tests/e2e:push_default,"
    )
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stderr.strip().splitlines()[-1].startswith(want), proc.stderr[-2000:]
    bazel("cquery", "//tests/e2e:all")  # the wildcard includes the manual push_all


AITER_ARCHS = CATALOG.target_archs(CATALOG.target("aiter-wheel"))


@check(
    f"aiter-wheel ({', '.join(AITER_ARCHS)} only) for gfx1201: refused by name and push,"
    " left out of a group"
)
def _unbuilt_arch():
    assert "gfx1201" not in AITER_ARCHS, AITER_ARCHS
    proc = bazel("build", "--nobuild", "//images:aiter-wheel", "--define=arch=gfx1201", check=False)
    assert proc.returncode != 0, "analysis succeeded"
    want = (
        "//images:aiter-wheel is not built for gfx1201: images/catalog.toml builds aiter-wheel"
        f" for {', '.join(AITER_ARCHS)} only (targets.aiter-wheel.archs); ask for --define"
        f" arch={','.join(AITER_ARCHS)}"
    )
    assert want in proc.stderr, proc.stderr[-2000:]
    proc = bazel("run", "//images:push_default.plan", "--define=arch=gfx1201")
    assert "registry: note: aiter-wheel is not built for gfx1201" in proc.stderr, proc.stderr[
        -2000:
    ]
    assert not [r for r in proc.stdout.split() if "/aiter-wheel:" in r], proc.stdout
    assert [r for r in proc.stdout.split() if "/vllm:" in r], proc.stdout
    proc = bazel("run", "//images:aiter-wheel.push.plan", "--define=arch=gfx1201", check=False)
    assert proc.returncode != 0, "an empty plan succeeded"
    assert "nothing to plan" in proc.stderr, proc.stderr[-2000:]
    return f"{len(proc.stdout.split())} refs, no aiter-wheel"


ALL_ARCHS = ",".join(CATALOG.archs)
FAMILIES = ",".join(CATALOG.families)


@check(
    f"real family analyses for all {len(CATALOG.archs)} archs and the {len(CATALOG.families)}"
    f" arch families; --define arch=all plans the {len(CATALOG.archs)} archs, no family"
)
def _real_family():
    assert "gfx110X-all" in CATALOG.families, "the family this check plans"
    bazel("build", "--nobuild", "//images/...", f"--define=arch={ALL_ARCHS},{FAMILIES}")
    # `all` is the same archs: the plan lists each of them, and no family
    proc = bazel("run", "//images:pytorch.push.plan", "--define=arch=all")
    archs = [ref.split(":latest-", 1)[1] for ref in proc.stdout.split() if ":latest-" in ref]
    assert archs == list(CATALOG.archs), archs
    # a family's plan is one image per target, tagged with the family's name
    proc = bazel("run", "//images:pytorch.push.plan", "--define=arch=gfx110X-all")
    assert proc.stdout.split()[-1].endswith("/pytorch:latest-gfx110X-all"), proc.stdout
    assert len(proc.stdout.split()) == 2, proc.stdout


@check("//images:push_default.plan prints exactly tagconf's tags, building nothing")
def _real_plan():
    proc = bazel("run", "//images:push_default.plan", f"--define=arch={ARCHS}")
    want = subprocess.run(
        [
            sys.executable,
            "-m",
            "tools.tagconf",
            "tags",
            "--group",
            "default",
            "--arch",
            ARCHS,
            "--registry",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert sorted(proc.stdout.splitlines()) == sorted(want.splitlines()), "plan differs"
    # (an ImageBuild of the real family cannot succeed here: no upstream
    # image, so a run that succeeds built none)
    return f"{len(want.splitlines())} refs"


@check("//images:push_default.help prints the push's help, with no image under it")
def _help_builds_nothing():
    graph = bazel(
        "aquery",
        'mnemonic("ImageBuild|ImageSpec", deps(//images:push_default.help))',
        "--output=jsonproto",
    ).stdout
    assert not json.loads(graph or "{}").get("actions"), "an image action under .help"
    proc = bazel("run", "//images:push_default.help")
    assert "  --dry-run" in proc.stdout and "//images:push_wheels" in proc.stdout, proc.stdout
    assert "Building image" not in proc.stderr, proc.stderr[-2000:]
    # the push itself asked for --help, through `bazel` on PATH (bootstrap's, which runs
    # tools/bazel as bazelisk would): the same help, and not one action run for it
    proc = bazel("run", "//images:push_default", "--define=arch=gfx1201", "--", "--help")
    assert "  --dry-run" in proc.stdout and "//images:push_wheels" in proc.stdout, proc.stdout
    assert "running bazel run //images:push_default.help" in proc.stderr, proc.stderr[-2000:]
    assert "Building image" not in proc.stderr, proc.stderr[-2000:]
    return f"push_default -- --help: {executed_actions(proc.stderr)} actions executed"


@check("--config=release stamps the commit: the plan has -g<short sha> tags")
def _release_plan():
    sha = subprocess.run(
        ["git", "rev-parse", "--short=7", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    proc = bazel("run", "//images:push_default.plan", "--config=release", "--define=arch=gfx950")
    stamped = [r for r in proc.stdout.splitlines() if r.endswith(f"-g{sha}")]
    # one immutable tag per image of the default group for that arch
    want = len(two_engines.images("gfx950", group="default"))
    assert len(stamped) == want, f"{len(stamped)} refs end in -g{sha}, want {want}"
    return f"{len(stamped)} refs end in -g{sha}"


@check("--cache_registry exports the layer cache to <repository>-cache; prune-cache sees it")
def _cache_registry():
    registry = os.environ["REGISTRY"]
    namespace = f"e2e-cache-{int(time.time())}"
    bazel("build", "//tests/e2e:triton-wheel", f"--cache_registry={registry}/{namespace}")
    url = f"http://{registry}/v2/{namespace}/triton-wheel-cache/tags/list"
    with urllib.request.urlopen(url, timeout=10) as r:
        tags = json.load(r)["tags"]
    # tagconf's cache ref of the catalogue's triton-wheel: <stage>_noarch_<versioned tag>
    triton = CATALOG.target("triton-wheel")
    versioned = render_tags(CATALOG, triton, None, resolve_values(CATALOG)).versioned
    want = cache_ref(f"{registry}/{namespace}", triton, None, versioned)
    assert want.startswith(f"{registry}/{namespace}/triton-wheel-cache:"), want
    assert tags == [want.rsplit(":", 1)[1]], (tags, want)
    proc = bazel(
        "run",
        "//tools/registry",
        "--",
        "prune-cache",
        "--registry",
        f"{registry}/{namespace}",
        "--keep",
        "1",
    )
    assert "0 of 1 cache manifests in 1 repositories deleted" in proc.stderr, proc.stderr[-500:]
    return f"{namespace}/triton-wheel-cache:{tags[0]}"


@check("--config=release publishes signed images with SBOM and provenance; verify; tamper fails")
def _release_signed():
    registry = os.environ["REGISTRY"]
    namespace = f"e2e-signed-{int(time.time())}"
    keys = tempfile.mkdtemp(prefix="e2e-cosign-")
    env = {"COSIGN_PASSWORD": "e2e-only"}
    subprocess.run(
        [find_cosign(), "generate-key-pair"],
        cwd=keys,
        env={**os.environ, **env},
        capture_output=True,
        check=True,
    )
    env["COSIGN_KEY"] = os.path.join(keys, "cosign.key")
    flags = [
        "--config=release",
        f"--define=arch={ARCHS}",
        f"--image_registry={registry}/{namespace}",
    ]
    first = bazel("run", "//tests/e2e:push_default", *flags, env=env)
    assert "signed" in first.stderr + first.stdout, (first.stderr + first.stdout)[-1500:]
    verify = [*flags, "--", "--key", os.path.join(keys, "cosign.pub")]
    ok = bazel("run", "//tests/e2e:push_default.verify", *verify, check=False)
    assert ok.returncode == 0, (ok.stderr + ok.stdout)[-1500:]
    again = bazel("run", "//tests/e2e:push_default", *flags, env=env)
    assert " 0 refs written" in again.stderr + again.stdout, (again.stderr + again.stdout)[-800:]
    # move a gfx950 tag to the gfx1201 image of the same repository (signed too)
    plan = bazel("run", "//tests/e2e:push_default.plan", *flags).stdout.split()
    victim = next(r for r in plan if "/rocm-runtime:" in r and r.endswith("-gfx950"))
    other = next(r for r in plan if "/rocm-runtime:" in r and r.endswith("-gfx1201"))
    accept = "application/vnd.oci.image.manifest.v1+json"

    def url(ref: str) -> str:
        host_repo, tag = ref.rsplit(":", 1)
        host, repo = host_repo.split("/", 1)
        return f"http://{host}/v2/{repo}/manifests/{tag}"

    with urllib.request.urlopen(
        urllib.request.Request(url(other), headers={"Accept": accept})
    ) as r:
        body, media_type = r.read(), r.headers["Content-Type"]
    put = urllib.request.Request(url(victim), data=body, method="PUT")
    put.add_header("Content-Type", media_type)
    urllib.request.urlopen(put).close()
    bad = bazel("run", "//tests/e2e:push_default.verify", *verify, check=False)
    assert bad.returncode == 1, (bad.stderr + bad.stdout)[-1500:]
    assert victim in bad.stderr + bad.stdout, (bad.stderr + bad.stdout)[-1500:]
    # a key that does not open stops the release before any action runs (#42 2.3)
    wrong = {**env, "COSIGN_PASSWORD": "not-the-password"}
    start = time.monotonic()
    stopped = bazel("build", "//tests/e2e:push_default", *flags, env=wrong, check=False)
    took = time.monotonic() - start
    assert stopped.returncode != 0, stopped.stderr[-1500:]
    assert "decryption failed" in stopped.stderr, stopped.stderr[-1500:]
    assert "Building image" not in stopped.stderr, stopped.stderr[-1500:]
    return (
        f"{registry}/{namespace}: verify passed, the moved tag {victim.rsplit('/', 1)[1]} failed;"
        f" a wrong key password stopped the release build in {took:.1f}s, no image build started"
    )


@check("two engines: --builders=gfx1201=<second engine> gives the same images and plan")
def _two_engines():
    assert BEFORE, "first build did not run"
    return two_engines.check(dict(BEFORE), os.path.abspath(".ci/.cache"))


@check("after bazel clean the family comes from staging: a staging hit per image, no BuildKit")
def _staging_hits():
    assert BEFORE, "first build did not run"
    bazel("clean")
    log = os.path.abspath(".ci/.cache/exec-log-clean.json")
    start = time.monotonic()
    proc = bazel(
        "build", FAMILY, f"--define=arch={ARCHS}", REPRODUCIBLE, f"--execution_log_json_file={log}"
    )
    wall = time.monotonic() - start
    builds = re.findall(r'"mnemonic": "ImageBuild"', open(log).read())
    hits = proc.stderr.count(": staging hit: ")
    assert builds and hits == len(builds), f"{hits} staging hits of {len(builds)} image builds"
    after = two_engines.digests()
    assert after == BEFORE, "a staging hit gave another digest"
    return f"{len(builds)} ImageBuild actions, {hits} staging hits, {wall:.1f}s wall"


class OtherStaging:
    """An embedded staging registry of its own (state dir, port), named with
    --staging=: a rebuild into it finds nothing staged, so BuildKit builds every image."""

    def __init__(self) -> None:
        from tools.process.daemon import free_port

        self.root = Path(tempfile.mkdtemp(prefix="rp-staging-again-"))
        port = free_port()
        self.env = {
            **os.environ,
            "ROCM_PYTORCH_STAGING_DIR": str(self.root),
            "ROCM_PYTORCH_STAGING_PORT": str(port),
        }
        self.define = f"--staging=127.0.0.1:{port}/again"

    def staging(self, command: str) -> None:
        subprocess.run(  # the sid tree's Python: docker-registry is in that tree
            ["rocm-pytorch-sid-run", "python3", "-m", "tools.staging", command],
            env=self.env,
            capture_output=True,
            check=True,
        )


@check("clean rebuild gives byte-identical digests")
def _reproducible():
    assert BEFORE, "first build did not run"
    engine_dir = os.environ.get("ROCM_PYTORCH_ENGINE_DIR", "")
    if not engine_dir or os.environ.get("DOCKER_HOST") != f"unix://{engine_dir}/docker.sock":
        # never wipe an engine CI did not start: on a build host that is hours
        # of BuildKit and ccache caches
        raise AssertionError(
            f"refusing to prune DOCKER_HOST={os.environ.get('DOCKER_HOST')}: not the private"
            " engine .ci/run started (tools/engine env --private); run this check through .ci/run"
        )
    bazel("clean")
    subprocess.run(["docker", "buildx", "prune", "-af"], capture_output=True, check=True)
    # into another staging: this one holds every image of these content keys (staging hits)
    other = OtherStaging()
    other.staging("start")
    try:
        proc = bazel("build", FAMILY, f"--define=arch={ARCHS}", REPRODUCIBLE, other.define)
        after = {n: d["digest"] for n, d in two_engines.descriptors(other.define).items()}
    finally:
        other.staging("stop")
        shutil.rmtree(other.root, ignore_errors=True)
    assert ": staging hit: " not in proc.stderr, "a staging hit: BuildKit did not rebuild"
    changed = sorted(k for k in BEFORE if after.get(k) != BEFORE[k])
    assert not changed, f"digests changed: {changed}"
    return f"{len(after)} digests equal, rebuilt by BuildKit into another staging"


def main() -> int:
    line, ok = check.summary("e2e checks")
    print(line)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
