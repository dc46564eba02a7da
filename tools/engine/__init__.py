"""The Docker engine of the builds and tests: `ensure()` finds or starts one.

    from tools import engine
    env = engine.ensure()   # {"DOCKER_HOST": ..., "DOCKER_CONFIG": ..., ...}
    engine.apply()          # the same, put into os.environ

See tools/engine/engine.py for the order (DOCKER_HOST, the host's engine, the
project's private engine) and `python3 -m tools.engine --help` for the CLI.
"""

from tools.engine.engine import (
    DIR_ENV,
    answers,
    apply,
    client_config,
    ensure,
    env_lines,
    get_unix,
    paths,
    state_dir,
    status,
    stop,
    unpointed_env,
)
from tools.engine.errors import EngineError

__all__ = [
    "DIR_ENV",
    "EngineError",
    "answers",
    "apply",
    "client_config",
    "ensure",
    "env_lines",
    "get_unix",
    "paths",
    "state_dir",
    "status",
    "stop",
    "unpointed_env",
]
