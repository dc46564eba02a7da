"""torchgen (rehearsal stand-in): ATen's code generator."""
