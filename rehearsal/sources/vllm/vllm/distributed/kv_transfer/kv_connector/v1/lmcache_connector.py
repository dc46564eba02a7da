"""LMCacheConnectorV1: vLLM's side of LMCache; the implementation is LMCache's own
(lmcache.integration.vllm.vllm_v1_adapter), imported when the connector is made."""

from typing import Any

from vllm.config import VllmConfig
from vllm.distributed.kv_transfer.kv_connector.v1.base import KVConnectorBase_V1, KVConnectorRole


class LMCacheConnectorV1(KVConnectorBase_V1):
    def __init__(self, vllm_config: VllmConfig, role: KVConnectorRole, kv_cache_config=None):
        super().__init__(vllm_config=vllm_config, role=role, kv_cache_config=kv_cache_config)
        assert vllm_config.kv_transfer_config is not None
        if vllm_config.kv_transfer_config.get_from_extra_config("use_native", False):
            raise NotImplementedError("the stand-in vLLM has no native LMCache integration")
        # lazy import
        from lmcache.integration.vllm.vllm_v1_adapter import (
            LMCacheConnectorV1Impl as LMCacheConnectorLatestImpl,
        )

        self._lmcache_engine = LMCacheConnectorLatestImpl(vllm_config, role, self)

    def describe(self) -> dict[str, Any]:
        """What the connector runs on: the LMCache engine's own description."""
        return self._lmcache_engine.describe()
