"""KVConnectorFactory: a connector name of --kv-transfer-config to its class, imported
only when named (LMCache's module is imported only for LMCacheConnectorV1)."""

import importlib
from typing import ClassVar

from vllm.config import VllmConfig
from vllm.distributed.kv_transfer.kv_connector.v1.base import KVConnectorBase_V1, KVConnectorRole


class KVConnectorFactory:
    _registry: ClassVar[dict[str, tuple[str, str]]] = {}

    @classmethod
    def register_connector(cls, name: str, module_path: str, class_name: str) -> None:
        if name in cls._registry:
            raise ValueError(f"Connector '{name}' is already registered.")
        cls._registry[name] = (module_path, class_name)

    @classmethod
    def get_connector_class(cls, name: str, module_path: str | None = None) -> type:
        if name in cls._registry:
            module_path, class_name = cls._registry[name]
        elif module_path is None:
            raise ValueError(f"Unsupported connector type: {name}")
        else:
            class_name = name
        return getattr(importlib.import_module(module_path), class_name)

    @classmethod
    def create_connector(cls, config: VllmConfig, role: KVConnectorRole) -> KVConnectorBase_V1:
        kv = config.kv_transfer_config
        if kv is None or kv.kv_connector is None:
            raise ValueError("no kv_connector in the KV transfer configuration")
        connector_cls = cls.get_connector_class(kv.kv_connector, kv.kv_connector_module_path)
        return connector_cls(config, role)


KVConnectorFactory.register_connector(
    "LMCacheConnectorV1",
    "vllm.distributed.kv_transfer.kv_connector.v1.lmcache_connector",
    "LMCacheConnectorV1",
)
