"""The stand-in's model: an echo, stepped by a Triton kernel as vLLM's ROCm path steps
its models through Triton kernels.

``generate`` tokenizes the prompt (whitespace; ids in order of first use), launches
the Triton kernel ``_echo_tokens`` over a grid of one program per new token (the
stand-in Triton compiles its C launcher on the first launch, with the image's C
compiler and Python.h, into the serving user's Triton cache), and detokenizes: new
token i is prompt token i mod n. Deterministic, as greedy decoding is.

The device step is the stand-in Triton's (triton.backends.amd.driver): it asks
the HIP runtime (libamdhip64.so) for its devices; on a host without a GPU there
are none, and the kernel's body runs on the CPU, program by program.
"""

import threading

import numpy as np
import triton
import triton.language as tl


@triton.jit
def _echo_tokens(prompt_ids, out_ids, n_prompt):
    i = tl.program_id(0)
    out_ids[i] = prompt_ids[i % n_prompt]


_announced = threading.Event()


def _announce() -> None:
    if _announced.is_set():
        return
    _announced.set()
    from triton.backends.amd import driver

    err, devices, name = driver.active().utils.device_count()
    where = f"{devices} HIP device(s)" if devices else f"no HIP device ({name or err})"
    print(f"INFO: Triton launcher ready; {where}: kernels run on the CPU", flush=True)


def generate(prompt: str, max_tokens: int) -> tuple[int, int, str]:
    """(prompt tokens, completion tokens, text) of ``max_tokens`` new tokens."""
    words = prompt.split()
    if not words:
        raise ValueError("The prompt is empty.")
    vocab: dict[str, int] = {}
    ids = np.array([vocab.setdefault(w, len(vocab)) for w in words], dtype=np.int64)
    out = np.zeros(max_tokens, dtype=np.int64)
    if max_tokens:
        _echo_tokens[(max_tokens,)](ids, out, len(ids))
        _announce()
    names = list(vocab)
    text = "".join(" " + names[t] for t in out.tolist())
    return len(ids), max_tokens, text
