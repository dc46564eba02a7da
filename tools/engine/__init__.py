"""The Docker engine of the builds and tests: `ensure()` finds or starts one.

    from tools import engine
    env = engine.ensure()   # {"DOCKER_HOST": ..., "DOCKER_CONFIG": ..., ...}
    engine.apply()          # the same, put into os.environ

See tools/engine/engine.py for the order (DOCKER_HOST, the host's engine, the
project's private engine) and `python3 -m tools.engine --help` for the CLI.
"""

from tools.engine.client import client_config, env_lines, unpointed_env
from tools.engine.engine import apply, ensure, status, stop
from tools.engine.errors import EngineError
from tools.engine.ping import answers, get_unix
from tools.engine.state import DIR_ENV, paths, state_dir

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
