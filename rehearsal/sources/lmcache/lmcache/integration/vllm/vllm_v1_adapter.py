"""LMCacheConnectorV1Impl: the implementation vLLM's LMCacheConnectorV1 delegates to.

Made by vLLM with (vllm_config, role, parent connector); it loads LMCache's
kernels (lmcache.c_ops, hipcc-compiled for the image's arch) and its settings,
and opens the NIXL channel when the settings ask for one.
"""

from typing import Any

from lmcache import __version__
from lmcache.v1.config import LMCacheEngineConfig


class LMCacheConnectorV1Impl:
    def __init__(self, vllm_config: Any, role: Any, parent: Any):
        from lmcache import c_ops  # noqa: F401  (the kernels must load)

        self._vllm_config = vllm_config
        self._role = role
        self._parent = parent
        self.config = LMCacheEngineConfig.from_env()
        self.channel = None
        if self.config.enable_pd and self.config.transfer_channel:
            from lmcache.v1.transfer_channel import CreateTransferChannel

            self.channel = CreateTransferChannel(self.config.transfer_channel)

    def describe(self) -> dict[str, Any]:
        from lmcache import c_ops

        return {
            "lmcache": __version__,
            "role": getattr(self._role, "name", str(self._role)),
            "archs": [a for a in c_ops.archs().split(";") if a],
            "chunk_size": self.config.chunk_size,
            "transfer_channel": self.config.transfer_channel if self.channel else None,
        }

    def get_num_new_matched_tokens(self, request: Any, num_computed_tokens: int) -> int:
        return 0  # the stand-in stores nothing

    def get_finished(self, finished_req_ids: set[str]) -> tuple[set[str] | None, set[str] | None]:
        return None, None
