"""The model the stand-in serves (vllm.model_executor.echo)."""
