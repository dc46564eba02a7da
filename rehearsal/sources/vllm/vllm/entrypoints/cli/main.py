"""The `vllm` command: `vllm serve MODEL [--host H] [--port P] [--kv-transfer-config JSON]`.

Before it listens, `serve` loads what serving needs and refuses to start
when it cannot: the native extension vllm._C, and, with a KV transfer
configuration, its connector (LMCacheConnectorV1 imports LMCache's module).
"""

import argparse
import sys

from vllm.version import __version__


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="vllm", description="vLLM CLI (rehearsal stand-in)")
    parser.add_argument("-v", "--version", action="version", version=__version__)
    sub = parser.add_subparsers(dest="subparser", required=True)
    serve = sub.add_parser("serve", help="Launch a local OpenAI-compatible API server")
    serve.add_argument("model_tag", nargs="?", help="the model to serve")
    serve.add_argument("--model", help="the model to serve (instead of MODEL_TAG)")
    serve.add_argument("--host", default=None, help="Host name (default: every interface)")
    serve.add_argument("--port", type=int, default=8000, help="Port number (default: 8000)")
    serve.add_argument("--served-model-name", default=None)
    serve.add_argument("--max-model-len", type=int, default=2048)
    serve.add_argument(
        "--kv-transfer-config",
        default=None,
        help='KV transfer configuration as JSON, e.g. \'{"kv_connector":"LMCacheConnectorV1",'
        '"kv_role":"kv_both"}\'',
    )
    return parser


def serve(args: argparse.Namespace) -> int:
    from vllm.config import KVTransferConfig, ModelConfig, VllmConfig

    model = args.model_tag or args.model
    if not model:
        print("vllm serve: name a model (vllm serve MODEL)", file=sys.stderr)
        return 2
    try:
        from vllm import _custom_ops
    except ImportError as error:
        print(
            f"vllm serve: cannot load vLLM's native extension vllm._C ({error});"
            " this installation cannot serve",
            file=sys.stderr,
        )
        return 1
    kv_config = (
        KVTransferConfig.from_cli(args.kv_transfer_config) if args.kv_transfer_config else None
    )
    config = VllmConfig(ModelConfig(model, args.served_model_name, args.max_model_len), kv_config)
    connector = None
    if kv_config is not None and kv_config.kv_connector:
        from vllm.distributed.kv_transfer.kv_connector.factory import KVConnectorFactory
        from vllm.distributed.kv_transfer.kv_connector.v1.base import KVConnectorRole

        connector = KVConnectorFactory.create_connector(config, KVConnectorRole.WORKER)
        print(
            f"vllm serve: KV connector {kv_config.kv_connector} ({kv_config.kv_role})", flush=True
        )
    print(f"vllm serve: vllm {__version__}, kernels for {_custom_ops.compiled_archs()}", flush=True)

    from vllm.entrypoints.openai.api_server import run_server

    return run_server(config, args.host, args.port, connector)


def main() -> None:
    args = make_parser().parse_args()
    if args.subparser == "serve":
        sys.exit(serve(args))


if __name__ == "__main__":
    main()
