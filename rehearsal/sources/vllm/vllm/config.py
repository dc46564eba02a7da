"""The parts of vLLM's configuration `vllm serve` of the stand-in reads."""

import json
from dataclasses import dataclass, field
from typing import Any

KV_ROLES = ("kv_producer", "kv_consumer", "kv_both")


@dataclass
class KVTransferConfig:
    """--kv-transfer-config: which KV connector moves the KV cache, and its settings."""

    kv_connector: str | None = None
    kv_role: str | None = None
    engine_id: str | None = None
    kv_connector_extra_config: dict[str, Any] = field(default_factory=dict)
    kv_connector_module_path: str | None = None

    def __post_init__(self) -> None:
        if self.kv_connector is not None and self.kv_role not in KV_ROLES:
            raise ValueError(
                f"Unsupported kv_role: {self.kv_role}. Supported roles are {list(KV_ROLES)}"
            )

    @classmethod
    def from_cli(cls, text: str) -> "KVTransferConfig":
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError(f"--kv-transfer-config takes a JSON object, not {text!r}")
        return cls(**data)

    def get_from_extra_config(self, key: str, default: Any) -> Any:
        return self.kv_connector_extra_config.get(key, default)


@dataclass
class ModelConfig:
    model: str
    served_model_name: str | None = None
    max_model_len: int = 2048


@dataclass
class VllmConfig:
    model_config: ModelConfig
    kv_transfer_config: KVTransferConfig | None = None
