"""A failed build whose staging registry no longer answers: one line says so, last.

The tail is BuildKit's own, from a build whose embedded staging registry was
SIGKILLed during its RUN step (//tests/imagebuild:faults_test does that for
real); here the classification alone, without an engine.
"""

from __future__ import annotations

import socket

from tools.imagebuild import build
from tools.process.daemon import free_port
from tools.staging import Staging

TAIL = """\
#7 exporting to image
#7 exporting layers 0.0s done
#7 exporting manifest sha256:3a00199e88a49cf25d7e6bfa4674132b98f79c1e601e6b01be5ba14cf6b3b3d3 done
#7 exporting config sha256:8451d65d48bf74b35da5d74844fbd9c2b2c80c07f85ce5139f0124d064f0c28e done
#7 pushing layers done
#7 ERROR: failed to push {host}/staging/faults-probe:c-a01f: failed to do request: Head "https://{host}/v2/staging/faults-probe/blobs/sha256:16c2": dial tcp {host}: connect: connection refused
------
 > exporting to image:
------
ERROR: failed to build: failed to solve: failed to push {host}/staging/faults-probe:c-a01f: failed to do request: Head "https://{host}/v2/staging/faults-probe/blobs/sha256:16c2": dial tcp {host}: connect: connection refused
"""  # noqa: E501
SPEC = {"target": "faults-probe", "arch": "gfx950"}


def test_a_shared_staging_that_refuses_is_named_with_what_to_do():
    host = f"127.0.0.1:{free_port()}"
    line = build.staging_stopped(Staging(f"{host}/team", False))
    assert line and line.startswith(f"the staging registry {host} does not answer (")
    assert "build again" in line and "\n" not in line


def test_a_staging_that_answers_is_not_blamed():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        host = f"127.0.0.1:{server.getsockname()[1]}"
        assert build.staging_stopped(Staging(f"{host}/team", False)) is None


def test_its_refused_connections_are_not_the_builders():
    host = f"127.0.0.1:{free_port()}"
    tail = TAIL.format(host=host).splitlines()
    lost = build.hints(tail, SPEC, "farm")
    assert any("builder farm (for arch gfx950) stopped answering" in h for h in lost)
    # should not blame the builder for the staging registry's refusals
    assert build.hints(tail, SPEC, "farm", Staging(f"{host}/staging", True)) == []
