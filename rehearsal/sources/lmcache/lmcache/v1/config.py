"""LMCacheEngineConfig: LMCache's settings, from LMCACHE_* environment variables
(LMCache also reads a YAML file, LMCACHE_CONFIG_FILE; the stand-in does not)."""

import os
from dataclasses import dataclass


def _bool(value: str) -> bool:
    return value.strip().lower() in ("1", "true", "yes", "on")


@dataclass
class LMCacheEngineConfig:
    chunk_size: int = 256
    local_cpu: bool = True
    max_local_cpu_size: float = 5.0
    enable_pd: bool = False
    transfer_channel: str | None = None  # "nixl" moves KV between prefill and decode

    @classmethod
    def from_env(cls) -> "LMCacheEngineConfig":
        env = os.environ
        return cls(
            chunk_size=int(env.get("LMCACHE_CHUNK_SIZE", cls.chunk_size)),
            local_cpu=_bool(env.get("LMCACHE_LOCAL_CPU", "true")),
            max_local_cpu_size=float(env.get("LMCACHE_MAX_LOCAL_CPU_SIZE", "5.0")),
            enable_pd=_bool(env.get("LMCACHE_ENABLE_PD", "false")),
            transfer_channel=env.get("LMCACHE_TRANSFER_CHANNEL") or None,
        )
