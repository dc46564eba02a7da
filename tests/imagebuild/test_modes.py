"""The two output modes of an image build: BuildKit's plain output unless `--reproducible`
(`--reproducible`, --config=release) asks for rewritten timestamps; the mode is in
the content key, so neither mode's staged image is ever reused for the other."""

from __future__ import annotations

from pathlib import Path

from tools.imagebuild import build, builders


def parse(*extra: str) -> build.BuildRequest:
    return build.BuildRequest.from_argv(
        ["--spec", "s.json", "--dockerfile", "Dockerfile", "--output", "o.json", *extra]
    )


def output_of(request: build.BuildRequest, tmp_path: Path) -> str:
    cmd = build.buildx_command(
        request,
        {"build_args": {}, "labels": {}},
        build.Scratch(tmp_path, tmp_path / "m.json"),
        build.Inputs({}),
        "127.0.0.1:5000/staging/x:c-1",
        builders.Builder(builders.LOCAL, "local", "docker"),
    )
    return cmd[cmd.index("--output") + 1]


def test_a_plain_build_uses_buildkits_plain_output(tmp_path):
    args = parse()
    assert args.reproducible is False  # what the image rule passes without the define
    assert output_of(args, tmp_path) == (
        "type=image,name=127.0.0.1:5000/staging/x:c-1,push=true,store=false,oci-mediatypes=true"
    )


def test_a_reproducible_build_rewrites_timestamps(tmp_path):
    assert output_of(parse("--reproducible"), tmp_path) == (
        "type=image,name=127.0.0.1:5000/staging/x:c-1,push=true,store=false,"
        "oci-mediatypes=true,rewrite-timestamp=true"
    )


def test_the_mode_is_part_of_the_content_key(tmp_path):
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text("FROM scratch\n")

    def key(reproducible: bool) -> str:
        request = parse("--network", "none", *(["--reproducible"] if reproducible else []))
        return build.content_key(request, b"{}", [dockerfile], build.Inputs({}), "b")

    assert key(True) != key(False)
    assert key(True) == key(True) and key(False) == key(False)


def test_the_spec_s_dockerfile_text_is_what_the_context_gets_and_no_file_is_read(tmp_path):
    # the image rule passes the Dockerfile's path only; the build spec holds the text
    # (tagconf's view: the stages the image reads), so the source file is no input
    args = parse("--src", "docker/scripts/a.sh")
    spec = {"dockerfile_text": "FROM scratch AS a\n\nRUN true\n"}
    assert build.context_files(args, spec) == [Path("docker/scripts/a.sh")]
    assert build.context_files(args, {}) == [Path("Dockerfile"), Path("docker/scripts/a.sh")]
    ctx = tmp_path / "ctx"
    build.assemble_context(ctx, [], [], (Path("docker/Dockerfile.x"), spec["dockerfile_text"]))
    assert (ctx / "docker/Dockerfile.x").read_text() == spec["dockerfile_text"]
