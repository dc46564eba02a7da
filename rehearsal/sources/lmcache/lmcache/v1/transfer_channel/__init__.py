"""Transfer channels: how LMCache moves KV chunks between engines."""


def CreateTransferChannel(channel_type: str, **kwargs):
    if channel_type == "nixl":
        from lmcache.v1.transfer_channel.nixl_channel import NixlChannel

        return NixlChannel(**kwargs)
    raise ValueError(f"Unsupported transfer channel: {channel_type}")
