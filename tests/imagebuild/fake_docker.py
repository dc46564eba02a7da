"""A fake `docker` CLI for the builder tests: answers from a scenario file.

$FAKE_DOCKER_SCENARIO is a JSON object {"<argv joined by spaces>": {"out": str,
"code": int, "sleep": float}}; an argv it does not list exits 1 with
"unexpected". Every call is appended to $FAKE_DOCKER_SCENARIO.calls.
"""

import json
import os
import sys
import time

scenario_path = os.environ["FAKE_DOCKER_SCENARIO"]
argv = " ".join(sys.argv[1:])
with open(scenario_path + ".calls", "a") as calls:
    calls.write(argv + "\n")
answer = json.load(open(scenario_path)).get(argv)
if answer is None:
    print(f"unexpected: docker {argv}", file=sys.stderr)
    sys.exit(1)
time.sleep(answer.get("sleep", 0))
sys.stdout.write(answer.get("out", ""))
sys.exit(answer.get("code", 0))
