"""NIXL (rehearsal stand-in): the agent, with NIXL's names.

An agent creates the backends its configuration lists (UCX by default); the
UCX backend is a UCP context, which loads UCX's transport modules: with ROCm
ones (rocm_cpy, rocm_ipc) the agent can move VRAM.
"""

from __future__ import annotations

from enum import Enum

from . import _bindings as nixlBind  # type: ignore
from .logging import get_logger

logger = get_logger(__name__)

DEFAULT_COMM_PORT = nixlBind.DEFAULT_COMM_PORT


class nixl_thread_sync_t(Enum):
    """How an agent synchronizes its threads."""

    NIXL_THREAD_SYNC_NONE = nixlBind.NIXL_THREAD_SYNC_NONE
    NIXL_THREAD_SYNC_STRICT = nixlBind.NIXL_THREAD_SYNC_STRICT
    NIXL_THREAD_SYNC_RW = nixlBind.NIXL_THREAD_SYNC_RW


class nixl_backend_handle(int):
    """A backend of an agent (its address in the native agent)."""


class nixl_prepped_dlist_handle(int):
    """A prepared descriptor list."""


class nixl_xfer_handle(int):
    """A transfer request."""


class nixl_agent_config:
    """What an agent starts with: threads, the listener port, its backends."""

    def __init__(
        self,
        enable_prog_thread: bool = True,
        enable_listen_thread: bool = False,
        listen_port: int = DEFAULT_COMM_PORT,
        capture_telemetry: bool = False,
        num_threads: int = 0,
        backends: list[str] | None = None,
        sync_mode: nixl_thread_sync_t | None = None,
    ):
        self.enable_pthread = enable_prog_thread
        self.enable_listen = enable_listen_thread
        self.port = listen_port
        self.capture_telemetry = capture_telemetry
        self.num_threads = num_threads
        self.backends = list(backends) if backends is not None else ["UCX"]
        self.sync_mode = sync_mode


class nixl_agent:
    """A NIXL agent named ``agent_name``, with the backends of ``nixl_conf``."""

    def __init__(
        self,
        agent_name: str,
        nixl_conf: nixl_agent_config | None = None,
        instantiate_all: bool = False,
    ):
        conf = nixl_conf or nixl_agent_config()
        native = nixlBind.nixlAgentConfig()
        native.useProgThread = conf.enable_pthread
        native.useListenThread = conf.enable_listen
        native.listenPort = conf.port
        native.captureTelemetry = conf.capture_telemetry
        sync = conf.sync_mode or (
            nixl_thread_sync_t.NIXL_THREAD_SYNC_STRICT
            if conf.enable_listen
            else nixl_thread_sync_t.NIXL_THREAD_SYNC_NONE
        )
        native.syncMode = sync.value
        self.agent = nixlBind.nixlAgent(agent_name, native)
        self.name = agent_name
        self.backends: dict[str, nixl_backend_handle] = {}
        self.plugin_list = self.agent.getAvailPlugins()
        if not self.plugin_list:
            raise RuntimeError("No plugins available for NIXL, cannot start transfers!")
        wanted = self.plugin_list if (instantiate_all and nixl_conf is None) else conf.backends
        for backend in wanted:
            if backend not in self.plugin_list:
                logger.warning("Skipping backend %s: no such plugin", backend)
                continue
            init = {"num_threads": str(conf.num_threads)} if conf.num_threads > 0 else {}
            self.create_backend(backend, init)
        self.nixl_mems = {
            "DRAM": nixlBind.DRAM_SEG,
            "VRAM": nixlBind.VRAM_SEG,
            "FILE": nixlBind.FILE_SEG,
            "BLOCK": nixlBind.BLK_SEG,
            "OBJ": nixlBind.OBJ_SEG,
        }
        self.nixl_ops = {"WRITE": nixlBind.NIXL_WRITE, "READ": nixlBind.NIXL_READ}
        logger.info("Initialized NIXL agent: %s", agent_name)

    def get_plugin_list(self) -> list[str]:
        return list(self.plugin_list)

    def create_backend(self, backend: str, initParams: dict[str, str] | None = None):
        handle = nixl_backend_handle(self.agent.createBackend(backend, dict(initParams or {})))
        self.backends[backend] = handle
        return handle

    def get_backend_params(self, backend: str) -> dict[str, str]:
        return dict(self.agent.getBackendParams(backend))

    def get_backend_mem_types(self, backend: str) -> list[str]:
        names = {v: k for k, v in self.nixl_mems.items()}
        return [names[m] for m in self.agent.getBackendMemTypes(backend)]
