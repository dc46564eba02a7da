"""torch.utils of the stand-in torch: cpp_extension (the JIT of C++ extensions)."""
