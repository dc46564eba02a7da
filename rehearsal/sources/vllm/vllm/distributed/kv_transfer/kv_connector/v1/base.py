"""KVConnectorBase_V1: the interface vLLM's engine drives a KV connector through."""

import enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vllm.config import VllmConfig


class KVConnectorRole(enum.Enum):
    # Connector running in the scheduler process
    SCHEDULER = 0
    # Connector running in the worker process
    WORKER = 1


class KVConnectorBase_V1:
    def __init__(self, vllm_config: "VllmConfig", role: KVConnectorRole, kv_cache_config=None):
        self._vllm_config = vllm_config
        self._role = role
        self._kv_cache_config = kv_cache_config
        self._kv_transfer_config = vllm_config.kv_transfer_config

    @property
    def role(self) -> KVConnectorRole:
        return self._role
