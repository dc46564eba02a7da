from torch.nn import attention, functional  # noqa: F401
