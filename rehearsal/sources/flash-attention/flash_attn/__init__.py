__version__ = "2.8.3"

from flash_attn.flash_attn_interface import flash_attn_archs, flash_attn_kernels

__all__ = ["flash_attn_archs", "flash_attn_kernels"]
