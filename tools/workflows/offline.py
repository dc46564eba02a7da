"""A workflow's jobs run on this machine, as a runner would run them: the offline proof.

`bazel run //tools/workflows -- offline .github/workflows/presubmit.yml` runs
each job whose runner this machine can stand in for (the CI hosts' labels,
LOCAL_LABELS), its steps in order, each `run:` with `bash -eo pipefail` in the
clone, the way GitHub's runner does:

- the runner's files are real files: GITHUB_OUTPUT, GITHUB_ENV,
  GITHUB_STEP_SUMMARY (one per step, as the runner keeps them), GITHUB_PATH;
  what a step writes to GITHUB_ENV reaches the later steps, its outputs are
  shown and kept (a later `steps.<id>.outputs.<name>` reads them);
- the `${{ }}` expressions the workflows use are evaluated: contexts
  (`inputs`, `matrix`, `steps`, `github`, `runner`), `||` with a default,
  string literals; an `inputs` value is its default (a dispatch's, or the
  run's `--input NAME=VALUE`);
- `actions/checkout` is this clone (nothing to do); `actions/cache/restore`
  misses and `actions/cache/save` keeps nothing (this machine has no CI
  cache; a miss is an answer a runner gets too); any other action, a
  secret, a runner label this machine is not (a build host, a GPU host) or
  an expression it cannot evaluate stops that job, and the job and the
  reason are listed: "not run here".

A step's output that ends in `N passed, M failed` (`.ci/run` does) adds its
counts; any other step counts as one. Prints a PASS/FAIL line per step, the
list of what was not run, and `N passed, N failed`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tools import places
from tools.workflows import miniyaml

# The labels of a CI host (docs/ci.md): this machine stands in for one.
LOCAL_LABELS = {"self-hosted", "linux", "x64", "rocm-pytorch-ci"}
CHECKOUT = "actions/checkout@"
# Actions the offline run stands in for: a cache this machine does not have
# misses (always a possible answer), and keeping one is left to a CI system.
CACHE_RESTORE = "actions/cache/restore@"
CACHE_SAVE = "actions/cache/save@"
_EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
_LITERAL = re.compile(r"'((?:[^']|'')*)'")
# What a Python tool or test runner put in this process's environment that a
# runner's shell would not have: a step's `python3 -m tools.X` imports the clone's.
_NOT_A_RUNNERS = (
    "PYTHONPATH",
    "PYTHONSAFEPATH",
    "PYTHONHOME",
    "RUNFILES_DIR",
    "RUNFILES_MANIFEST_FILE",
    "PYTHON_RUNFILES",
    "JAVA_RUNFILES",
)
_COUNTS = re.compile(r"(\d+) passed, (\d+) failed\s*$")


class NotHere(Exception):
    """What keeps a job from running on this machine (listed, not a failure)."""


@dataclass
class Tally:
    passed: int = 0
    failed: int = 0
    lines: list[str] = field(default_factory=list)
    not_run: list[str] = field(default_factory=list)
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)  # job -> outputs
    summaries: dict[str, str] = field(default_factory=dict)  # job/step -> summary text


def evaluate(expression: str, contexts: dict) -> str:
    """The value of one `${{ }}` expression: `a.b.c`, `'literal'`, `x || y`."""
    for alternative in (part.strip() for part in expression.split("||")):
        literal = _LITERAL.fullmatch(alternative)
        if literal:
            value = literal.group(1).replace("''", "'")
        elif re.fullmatch(r"[A-Za-z_][\w-]*(\.[A-Za-z_][\w-]*)*", alternative):
            value = contexts
            for key in alternative.split("."):
                value = value.get(key) if isinstance(value, dict) else None
        else:
            raise NotHere(f"the expression `{expression}` (not evaluable offline)")
        if value not in (None, "", False):
            return value if isinstance(value, str) else str(value)
    return ""


def substitute(text: str, contexts: dict) -> str:
    return _EXPR.sub(lambda m: evaluate(m.group(1), contexts), str(text))


def _labels(runs_on) -> set[str]:
    labels = runs_on if isinstance(runs_on, list) else [runs_on]
    return {str(label) for label in labels}


def _read_kv(path: Path) -> dict[str, str]:
    """NAME=VALUE lines and NAME<<DELIM heredocs, as the runner reads GITHUB_OUTPUT/ENV."""
    values: dict[str, str] = {}
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            end = lines.index(delimiter, i + 1)
            values[name] = "\n".join(lines[i + 1 : end])
            i = end + 1
            continue
        if "=" in line:
            name, value = line.split("=", 1)
            values[name] = value
        i += 1
    return values


def _run_step(script: str, root: Path, env: dict, log) -> subprocess.CompletedProcess[str]:
    """Run one `run:` step as the runner does; its output goes to ``log`` as it comes (a
    step of `.ci/run e2e` runs for many minutes) and is kept for the counts."""
    lines = []
    with subprocess.Popen(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    ) as proc:
        for line in proc.stdout:
            lines.append(line)
            log(line.rstrip("\n"))
    return subprocess.CompletedProcess(proc.args, proc.returncode, "".join(lines), "")


def run_job(name: str, job: dict, inputs: dict, root: Path, tally: Tally, log) -> None:
    labels = _labels(job.get("runs-on", []))
    if "uses" in job:
        raise NotHere(f"calls the reusable workflow {job['uses']}")
    # labels this host lacks, then those an expression picks (never a local one)
    need = sorted(
        (label for label in labels if label not in LOCAL_LABELS), key=lambda x: ("${{" in x, x)
    )
    if need:
        need = ", ".join(need)
        raise NotHere(f"needs a runner labelled {need} (this machine stands in for a CI host)")
    if "strategy" in job:
        raise NotHere("a matrix job (its matrix comes from an earlier job's outputs)")
    with tempfile.TemporaryDirectory(prefix=f"offline-{name}-") as tmp:
        files = Path(tmp)
        env_file = files / "env"
        env_file.touch()
        steps_ctx: dict[str, dict] = {}
        contexts = {
            "inputs": inputs,
            "github": {"run_id": "0", "workspace": str(root), "event_name": "offline"},
            "runner": {"temp": str(files)},
            "steps": steps_ctx,
            "env": {},
        }
        job_env = {k: substitute(v, contexts) for k, v in (job.get("env") or {}).items()}
        contexts["env"] = job_env
        for number, step in enumerate(job.get("steps") or [], 1):
            title = step.get("name") or step.get("run") or step.get("uses")
            where = f"{name} step {number} ({title})"
            if "secrets." in repr(step):
                raise NotHere(f"{where} needs a secret")
            if "if" in step:
                raise NotHere(f"{where} has a condition (`if:`), not evaluated offline")
            uses = step.get("uses")
            if uses and uses.startswith(CHECKOUT):
                log(f"{where}: the checkout is this clone")
                continue
            if uses and uses.startswith(CACHE_RESTORE):
                log(f"{where}: a cache miss (no CI cache here)")
                if step.get("id"):
                    steps_ctx[step["id"]] = {"outputs": {"cache-hit": ""}}
                continue
            if uses and uses.startswith(CACHE_SAVE):
                log(f"{where}: nothing kept (no CI cache here)")
                continue
            if uses:
                raise NotHere(f"{where} uses {uses.split('@')[0]}, an action (not run offline)")
            env = {k: v for k, v in os.environ.items() if k not in _NOT_A_RUNNERS}
            env.update(job_env)
            env.update(_read_kv(env_file))
            output = files / f"output-{number}"
            summary = files / f"summary-{number}"
            env.update(
                {
                    "CI": "true",
                    "GITHUB_ACTIONS": "true",
                    "GITHUB_WORKSPACE": str(root),
                    "GITHUB_RUN_ID": "0",
                    "GITHUB_OUTPUT": str(output),
                    "GITHUB_ENV": str(env_file),
                    "GITHUB_STEP_SUMMARY": str(summary),
                    "GITHUB_PATH": str(files / "path"),
                    "RUNNER_TEMP": str(files),
                }
            )
            env.update({k: substitute(v, contexts) for k, v in (step.get("env") or {}).items()})
            script = substitute(step["run"], contexts)
            log(f"{where}: {script.strip().splitlines()[0]}")
            proc = _run_step(script, root, env, log)
            outputs = _read_kv(output)
            if step.get("id"):
                steps_ctx[step["id"]] = {"outputs": outputs}
            if summary.exists():
                tally.summaries[where] = summary.read_text(encoding="utf-8")
            counts = _COUNTS.search(
                proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
            )
            if counts:
                tally.passed += int(counts.group(1))
                tally.failed += int(counts.group(2))
                tally.lines += [
                    line for line in proc.stdout.splitlines() if line.startswith("FAIL")
                ]
            ok = proc.returncode == 0
            if not counts:
                tally.passed += ok
                tally.failed += not ok
            tally.lines.append(f"{'PASS' if ok else 'FAIL'}: {where}: exit {proc.returncode}")
            if not ok:
                return
        job_outputs = {k: substitute(v, contexts) for k, v in (job.get("outputs") or {}).items()}
        tally.outputs[name] = job_outputs


def run_workflow(path: Path, inputs: dict[str, str], jobs: list[str], root: Path, log) -> Tally:
    """Run the jobs of `path` that can run here (all, or those named), in file order."""
    workflow = miniyaml.loads(path.read_text(encoding="utf-8"))
    on = workflow.get(True) or workflow.get("on") or {}  # YAML 1.1 reads `on:` as True
    defaults = {}
    for trigger in on.values() if isinstance(on, dict) else []:
        inputs_spec = trigger.get("inputs") if isinstance(trigger, dict) else None
        for key, spec in (inputs_spec or {}).items():
            if isinstance(spec, dict) and "default" in spec:
                defaults[key] = str(spec["default"])
    given = {**defaults, **inputs}
    tally = Tally()
    for name, job in (workflow.get("jobs") or {}).items():
        if jobs and name not in jobs:
            continue
        try:
            run_job(name, job, given, root, tally, log)
        except NotHere as why:
            tally.not_run.append(f"{path.name} {name}: {why}")
    return tally


def add_parser(sub) -> None:
    """The `offline` command of `python3 -m tools.workflows`."""
    p = sub.add_parser("offline", help="run a workflow's jobs here, as a CI host would")
    p.add_argument("workflow", type=Path, nargs="+", help="workflow files")
    p.add_argument("--job", action="append", default=[], help="only this job (repeat)")
    p.add_argument("--input", action="append", default=[], help="NAME=VALUE of `inputs`")
    p.add_argument("--quiet", action="store_true", help="no step output, the lines only")
    p.set_defaults(run=run)


def run(args) -> int:
    inputs = {}
    for item in args.input:
        name, sep, value = item.partition("=")
        if not sep or not name:
            print(f"workflows offline: --input {item}: want NAME=VALUE", file=sys.stderr)
            return 2
        inputs[name] = value
    root = places.workspace()

    def log(text: str) -> None:
        if not args.quiet:
            print(text, flush=True)

    total = Tally()
    for path in args.workflow:
        full = path if path.is_absolute() else root / path
        if not full.is_file():
            print(f"workflows offline: {path}: no such workflow file", file=sys.stderr)
            return 2
        tally = run_workflow(full, inputs, args.job, root, log)
        total.passed += tally.passed
        total.failed += tally.failed
        total.lines += tally.lines
        total.not_run += tally.not_run
        for job, outputs in tally.outputs.items():
            for key, value in outputs.items():
                print(f"output: {full.name} {job}.{key} = {value}")
        for where, text in tally.summaries.items():
            last = text.strip().splitlines()[-1] if text.strip() else "(empty)"
            print(f"summary: {where}: {last}")
    print("\n".join(total.lines))
    for reason in total.not_run:
        print(f"not run here: {reason}")
    print(f"{total.passed} passed, {total.failed} failed")
    return 1 if total.failed else 0
