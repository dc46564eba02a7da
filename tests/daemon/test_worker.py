"""tools/process/worker.py: a tool's main as a Bazel persistent worker (JSON protocol)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

from tools.process import worker


def requests(*argvs: list[str]) -> io.StringIO:
    lines = [json.dumps({"arguments": a, "requestId": i + 1}) for i, a in enumerate(argvs)]
    return io.StringIO("\n".join(lines) + "\n")


def answers(out: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_each_request_gets_one_response_with_its_output_and_exit_code(monkeypatch):
    seen = []

    def main(argv: list[str]) -> int:
        seen.append((argv, os.environ.get("LEFT_BEHIND")))
        os.environ["LEFT_BEHIND"] = "1"  # should not reach the next request
        print("out", *argv)
        print("err", file=sys.stderr)
        return len(argv)

    monkeypatch.delenv("LEFT_BEHIND", raising=False)
    out = io.StringIO()
    assert worker.serve(main, requests(["a"], ["b", "c"]), out) == 0
    assert answers(out) == [
        {"exitCode": 1, "output": "out a\nerr\n", "requestId": 1},
        {"exitCode": 2, "output": "out b c\nerr\n", "requestId": 2},
    ]
    # should run every request in the environment the worker started with
    assert seen == [(["a"], None), (["b", "c"], None)]


def test_a_request_that_exits_or_raises_is_answered_and_the_next_served():
    def main(argv: list[str]) -> int:
        if argv == ["exit"]:
            raise SystemExit(2)
        if argv == ["usage"]:
            raise SystemExit("usage: tool ARG")
        if argv == ["help"]:
            raise SystemExit(None)
        raise RuntimeError("boom")

    out = io.StringIO()
    worker.serve(main, requests(["exit"], ["usage"], ["help"], ["crash"]), out)
    got = answers(out)
    assert [a["exitCode"] for a in got] == [2, 1, 0, 1]
    assert got[1]["output"] == "usage: tool ARG\n"
    assert "RuntimeError: boom" in got[3]["output"]


def test_flagfiles_are_expanded_one_argument_a_line(tmp_path):
    params = tmp_path / "x.params"
    params.write_text("--spec\nsome file.json\n--flag=a b\n")
    assert worker.expand(["--first", f"@{params}"]) == [
        "--first",
        "--spec",
        "some file.json",
        "--flag=a b",
    ]
    assert worker.expand(["@not-a-file"]) == ["@not-a-file"]
    got = []
    assert worker.run(lambda a: got.append(a) or 0, argv=[f"@{params}"]) == 0
    assert got == [["--spec", "some file.json", "--flag=a b"]]


def worker_process(main_body: str) -> subprocess.Popen:
    """A worker (``--persistent_worker``) whose ``main(argv)`` is ``main_body``, pipes on
    its stdin, stdout and stderr."""
    code = (
        "import os, subprocess, sys, time\n"
        "from tools.process import worker\n"
        "def main(argv):\n" + main_body + "sys.exit(worker.run(main))\n"
    )
    return subprocess.Popen(
        [sys.executable, "-c", code, worker.FLAG],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        cwd=Path.cwd(),
    )


def test_output_of_a_child_process_never_enters_the_protocol():
    # a request that starts a program writing to file descriptor 1 (a daemon, a CLI)
    proc = worker_process(
        "    subprocess.run(['echo', 'stray'])\n    print('mine')\n    return 0\n"
    )
    stdout, stderr = proc.communicate(requests(["x"], ["y"]).getvalue(), timeout=60)
    assert proc.returncode == 0, stderr
    assert [json.loads(line) for line in stdout.splitlines()] == [
        {"exitCode": 0, "output": "mine\n", "requestId": 1},
        {"exitCode": 0, "output": "mine\n", "requestId": 2},
    ]
    assert stderr.count("stray") == 2  # the worker's log


def test_sigterm_ends_the_worker_and_what_a_request_reads_is_not_the_protocol():
    # a request whose child reads stdin (it gets nothing), then one that says on the
    # worker's log (file descriptor 2, not its response) that it waits, and waits
    proc = worker_process(
        "    if argv == ['read']:\n"
        "        got = subprocess.run(['cat'], capture_output=True, text=True).stdout\n"
        "        print(repr(got), os.environ.get(worker.ENV))\n"
        "        return 0\n"
        "    try:\n"
        "        os.write(2, b'waiting\\n')\n"
        "        time.sleep(60)\n"
        "    finally:\n"
        "        os.write(2, b'cleaned up\\n')\n"
        "    return 0\n"
    )
    assert proc.stdin and proc.stdout and proc.stderr
    proc.stdin.write(requests(["read"], ["wait"]).getvalue())
    proc.stdin.flush()
    first = json.loads(proc.stdout.readline())
    # the child read /dev/null, not the next request; the worker counts as a Bazel spawn
    assert first == {"exitCode": 0, "output": "'' 1\n", "requestId": 1}
    assert proc.stderr.readline() == "waiting\n"  # the second request runs
    proc.terminate()
    assert proc.wait(timeout=10) == 143
    assert proc.stdout.read() == ""  # no answer for the request SIGTERM ended
    assert proc.stderr.read() == "cleaned up\n"  # which unwound: its cleanup ran
