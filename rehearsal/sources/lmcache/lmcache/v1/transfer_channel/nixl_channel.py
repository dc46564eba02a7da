"""The NIXL transfer channel. NIXL is imported only when the channel is made:
LMCache without disaggregated prefill needs no NIXL installed."""

import uuid


class NixlChannel:
    def __init__(self, name: str | None = None, **kwargs):
        try:
            from nixl._api import nixl_agent
        except ImportError as error:
            raise RuntimeError(
                "LMCache's NIXL transfer channel needs NIXL (the nixl package)"
            ) from error
        self.name = name or f"lmcache-{uuid.uuid4().hex[:8]}"
        self.agent = nixl_agent(self.name, None)
