"""Every bad input: a non-zero exit and one message naming the value and the fix.

On the tests' own catalogue (tests/fixtures/catalog.toml): its archs, families
and values."""

from __future__ import annotations

import pytest

# (description, argv, expected exit code, fragments the message must contain)
CLI_CASES = [
    (
        "upper case in the registry namespace",
        ["spec", "--target", "pytorch-src", "--registry", "127.0.0.1:5003/UP"],
        2,
        ["--registry: '127.0.0.1:5003/UP': bad namespace component 'UP'", "write 'up'"],
    ),
    (
        "a registry ending with a slash",
        ["spec", "--target", "pytorch-src", "--registry", "127.0.0.1:5000/team/"],
        2,
        ["--registry: '127.0.0.1:5000/team/' ends with '/'; write '127.0.0.1:5000/team'"],
    ),
    (
        "empty registry host",
        ["tags", "--registry", "//ns"],
        2,
        ["--registry: '//ns': bad host ''", "HOST[:PORT]/NAMESPACE"],
    ),
    (
        "space in the registry",
        ["tags", "--registry", "re l"],
        2,
        ["--registry: 're l': bad host 're l'"],
    ),
    (
        "registry host starting with a dash",
        ["spec", "--target", "pytorch-src", "--registry=-bad"],
        2,
        ["--registry: '-bad': bad host '-bad'"],
    ),
    (
        "empty registry",
        ["spec", "--target", "pytorch-src", "--registry", ""],
        2,
        ["--registry: empty registry"],
    ),
    (
        "credentials in the registry are refused and never printed",
        ["spec", "--target", "pytorch-src", "--registry", "alice:s3cretPW!@host/x"],
        2,
        ["--registry: ***@host/x: credentials in a registry string", "docker login"],
    ),
    (
        "bad cache registry",
        ["spec", "--target", "pytorch-src", "--cache-registry", "host/a___b"],
        2,
        ["--cache-registry: 'host/a___b': bad namespace component 'a___b'"],
    ),
    (
        "unknown arch lists the known ones",
        ["tags", "--arch", "gfx951"],
        2,
        [
            "--arch gfx951: unknown arch",
            "did you mean 'gfx950'",
            "known archs: gfx942, gfx950, gfx1100, gfx1101, gfx1201;"
            " families: gfx94X-gfx950-dcgpu, gfx110X",
        ],
    ),
    (
        "a miscased family",
        ["tags", "--arch", "gfx110x"],
        2,
        ["--arch gfx110x: unknown arch or family; did you mean 'gfx110X'?"],
    ),
    (
        "a family's stem names its families",
        ["tags", "--arch", "gfx94X"],
        2,
        [
            "--arch gfx94X: unknown arch or family; did you mean 'gfx94X-gfx950-dcgpu'?"
            " known archs: gfx942,"
        ],
    ),
    (
        "unknown arch inside a list",
        ["tags", "--arch", "gfx950,gfx12O1"],
        2,
        ["--arch gfx12O1: unknown arch", "did you mean 'gfx1201'"],
    ),
    (
        "empty arch in a list",
        ["tags", "--arch", "gfx950,"],
        2,
        ["empty arch in list", "--arch gfx950,gfx1201"],
    ),
    (
        "unknown target suggests the nearest",
        ["tags", "--target", "pytorh"],
        2,
        ["--target pytorh: unknown target", "did you mean 'pytorch'"],
    ),
    (
        "unknown group suggests the nearest",
        ["tags", "--group", "wheel"],
        2,
        ["--group wheel: unknown group", "did you mean 'wheels'"],
    ),
    (
        "group command with unknown group",
        ["group", "servng"],
        2,
        ["unknown group", "did you mean 'serving'"],
    ),
    ("group all does not exist", ["group", "all"], 2, ["there is no 'all' group"]),
    (
        "tags --group all does not exist",
        ["tags", "--group", "all"],
        2,
        ["--group all: unknown group", "known: default, wheels, serving"],
    ),
    (
        "unknown --set key",
        ["tags", "--set", "PYTORCH_VERSIN=2.16.0"],
        2,
        ["--set PYTORCH_VERSIN=2.16.0: unknown key", "did you mean 'PYTORCH_VERSION'"],
    ),
    (
        "--set without =",
        ["tags", "--set", "PYTORCH_VERSION"],
        2,
        ["--set PYTORCH_VERSION: expected KEY=VALUE"],
    ),
    (
        "--set ARCH is not a key",
        ["tags", "--set", "ARCH=gfx950"],
        2,
        ["--set ARCH=gfx950: unknown key"],
    ),
    (
        "--set value with a slash makes an invalid tag",
        ["tags", "--set", "ROCM_VERSION=10.1/x"],
        2,
        [
            "rocm-runtime: tag '10.1/x-gfx950' is not a valid OCI tag",
            "ROCM_VERSION='10.1/x'",
            "no '/'",
        ],
    ),
    (
        "--set value with a plus makes an invalid tag",
        ["tags", "--set", "PYTORCH_VERSION=2.16+rocm"],
        2,
        ["pytorch-src: tag '2.16+rocm' is not a valid OCI tag", "PYTORCH_VERSION='2.16+rocm'"],
    ),
    (
        "--set value starting with a dot",
        ["tags", "--target", "pytorch-src", "--set", "PYTORCH_VERSION=.2"],
        2,
        ["tag '.2' is not a valid OCI tag"],
    ),
    (
        "--set empty value makes an invalid tag",
        ["tags", "--target", "pytorch-src", "--set", "PYTORCH_VERSION="],
        2,
        ["tag '' is not a valid OCI tag"],
    ),
    (
        "--set value too long",
        ["tags", "--set", "VLLM_REF=" + "v" * 120],
        2,
        ["vllm: tag", "at most 128 characters"],
    ),
    (
        "VCS_REF too short",
        ["tags", "--vcs-ref", "abc12"],
        2,
        ["bad VCS_REF 'abc12'", "7-40 character lowercase hex"],
    ),
    ("VCS_REF upper case", ["tags", "--vcs-ref", "ABCDEF0"], 2, ["bad VCS_REF 'ABCDEF0'"]),
    ("VCS_REF not hex", ["tags", "--vcs-ref", "main-branch"], 2, ["bad VCS_REF 'main-branch'"]),
    ("VCS_REF too long", ["tags", "--vcs-ref", "a" * 41], 2, ["bad VCS_REF"]),
    (
        "VCS_REF through --set",
        ["tags", "--set", "VCS_REF=xyz1234"],
        2,
        ["VCS_REF=xyz1234: bad VCS_REF 'xyz1234'"],
    ),
    (
        "a target asked for an arch it is not built for",
        ["tags", "--target", "aiter-wheel", "--arch", "gfx950,gfx1100"],
        2,
        [
            "--target aiter-wheel: aiter-wheel is not built for gfx1100: catalog.toml builds it"
            " for gfx942, gfx950 only (targets.aiter-wheel.archs)",
            "ask for one of gfx942, gfx950",
        ],
    ),
    (
        "the spec of a target for an arch it is not built for",
        ["spec", "--target", "aiter-wheel", "--arch", "gfx1201"],
        2,
        ["--arch gfx1201: aiter-wheel is not built for gfx1201", "ask for one of gfx942, gfx950"],
    ),
    ("unknown --kind", ["tags", "--kind", "moving"], 2, ["invalid choice: 'moving'"]),
    ("unknown command", ["push"], 2, ["invalid choice: 'push'"]),
    ("no command", [], 2, ["required: COMMAND"]),
]


@pytest.mark.parametrize("desc,argv,code,fragments", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_bad_cli_input(run, desc, argv, code, fragments):
    result = run(*argv)
    assert result.code == code, (desc, result)
    assert result.out == ""
    for fragment in fragments:
        assert fragment in result.err, (desc, fragment, result.err)
    if "invalid choice" not in fragments[0] and "required" not in fragments[0]:
        assert result.err.startswith("tagconf: error: ")
        assert result.err.count("\n") == 1, "one message, no traceback"
    # should never echo a password
    assert "s3cret" not in result.err


# (description, old text, new text, fragments the message must contain)
CATALOG_CASES = [
    ("not TOML", 'registry = "', "registry = ", ["not valid TOML", "fix the syntax"]),
    (
        "upper case in the catalogue registry",
        'registry = "fixture-registry.example:5000/fixture"',
        'registry = "fixture-registry.example:5000/ROCm"',
        [
            "registry: 'fixture-registry.example:5000/ROCm': bad namespace component",
            "write 'rocm'",
        ],
    ),
    (
        "catalogue registry ending with a slash",
        'registry = "fixture-registry.example:5000/fixture"',
        'registry = "fixture-registry.example:5000/fixture/"',
        [
            "registry: 'fixture-registry.example:5000/fixture/' ends with '/';"
            " write 'fixture-registry.example:5000/fixture'"
        ],
    ),
    (
        "upper case in a repository name",
        'repository = "pytorch-src"',
        'repository = "PyTorch-Src"',
        [
            "targets.pytorch-src.repository: 'PyTorch-Src' is not an OCI repository name;"
            " write 'pytorch-src' (repository names are lower case:"
            " [a-z0-9]+((.|_|__|-+)[a-z0-9]+)*, components joined by /)"
        ],
    ),
    (
        "a repository name with an empty component",
        'repository = "pytorch-src"',
        'repository = "rocm//pytorch-src"',
        [
            "targets.pytorch-src.repository: 'rocm//pytorch-src' is not an OCI repository name;"
            " repository names are lower case:"
            " [a-z0-9]+((.|_|__|-+)[a-z0-9]+)*, components joined by /"
        ],
    ),
    (
        "missing registry",
        'registry = "fixture',
        'xregistry = "fixture',
        ["xregistry: unknown key", "did you mean 'registry'"],
    ),
    (
        "missing defaults table",
        "\n[defaults]\n",
        "\n[defaultz]\n",
        ["defaultz: unknown key", "did you mean 'defaults'"],
    ),
    (
        "missing VCS_REF default",
        'VCS_REF = ""',
        "",
        ["defaults.VCS_REF: missing field", 'add VCS_REF = ""'],
    ),
    ("bad VCS_REF default", 'VCS_REF = ""', 'VCS_REF = "HEAD"', ["bad VCS_REF 'HEAD'"]),
    (
        "non-string default",
        'PYTHON_VERSION = "3.21"',
        "PYTHON_VERSION = 3.21",
        ["defaults.PYTHON_VERSION: must be a string, got 3.21", "quote it"],
    ),
    (
        "unknown default arch",
        'default = "gfx950"',
        'default = "gfx951"',
        ["archs.default: unknown 'gfx951'", "did you mean 'gfx950'"],
    ),
    (
        "duplicate arch",
        '    "gfx942",\n',
        '    "gfx942",\n    "gfx942",\n',
        ["archs.known: duplicate 'gfx942'"],
    ),
    ("bad arch name", '    "gfx942",\n', '    "GFX942",\n', ["archs.known: bad arch 'GFX942'"]),
    (
        "missing target field",
        'stage = "rocm-runtime"\n',
        "",
        ["targets.rocm-runtime.stage: missing field", "add stage"],
    ),
    (
        "wrong field type",
        "arch = true\ndockerfile",
        'arch = "yes"\ndockerfile',
        ["targets.rocm-runtime.arch: must be a bool, got 'yes'"],
    ),
    (
        "unknown target field",
        'repository = "rocm-runtime"',
        'repository = "rocm-runtime"\nrepo = "x"',
        ["targets.rocm-runtime.repo: unknown field", "did you mean 'repository'"],
    ),
    (
        "duplicate target",
        'name = "pytorch-src"',
        'name = "rocm-runtime"',
        ["targets.rocm-runtime: duplicate target"],
    ),
    (
        "group naming an unknown target",
        '    "aiter-wheel",\n    "vllm",\n]\nwheels',
        '    "aiter-wheel",\n    "vllm-srv",\n]\nwheels',
        ["groups.default: unknown target 'vllm-srv'", "did you mean 'vllm'"],
    ),
    ("an all group", "serving = [", "all = [", ["groups.all: there is no 'all' group"]),
    (
        "parent naming an unknown target",
        'parents = ["rocm-runtime"]',
        'parents = ["rocm-runtme"]',
        [
            "targets.pytorch-base.parents: unknown target 'rocm-runtme'",
            "did you mean 'rocm-runtime'",
        ],
    ),
    (
        "parent cycle",
        'stage = "rocm-runtime"\nparents = []',
        'stage = "rocm-runtime"\nparents = ["pytorch-base"]',
        [
            "parent cycle rocm-runtime -> pytorch-base -> rocm-runtime",
            "remove one of these parents",
        ],
    ),
    (
        "arch-free target with an arch parent",
        'stage = "pytorch-src"\nparents = []',
        'stage = "pytorch-src"\nparents = ["rocm-runtime"]',
        ["targets.pytorch-src.parents: arch-free target has arch parent 'rocm-runtime'"],
    ),
    (
        "template naming an unknown variable",
        'tag = "${ROCM_VERSION}-${ARCH}"',
        'tag = "${ROCM_VERSON}-${ARCH}"',
        [
            "targets.rocm-runtime.tag: template '${ROCM_VERSON}-${ARCH}' names unknown variable",
            "did you mean 'ROCM_VERSION'",
        ],
    ),
    (
        "template naming VCS_REF",
        'tag = "${ROCM_VERSION}-${ARCH}"',
        'tag = "${VCS_REF}-${ARCH}"',
        ["names unknown variable 'VCS_REF'"],
    ),
    (
        "malformed template",
        'tag = "${ROCM_VERSION}-${ARCH}"',
        'tag = "${ROCM_VERSION-${ARCH}"',
        ["targets.rocm-runtime.tag: malformed template"],
    ),
    (
        "arch target without ${ARCH}",
        'tag = "${ROCM_VERSION}-${ARCH}"',
        'tag = "${ROCM_VERSION}"',
        ["lacks ${ARCH}", "every arch would push the same tag"],
    ),
    (
        "arch-free target with ${ARCH}",
        'tag = "${TRITON_VERSION}-${ROCM_VERSION}"',
        'tag = "${TRITON_VERSION}-${ARCH}"',
        ["arch-free target's template", "uses ${ARCH}"],
    ),
    (
        "two targets on one repository:tag",
        'repository = "pytorch-wheel"',
        'repository = "pytorch"',
        [
            "pytorch:4.5.6-9.8.7-full-gfx942: tag collision between pytorch (gfx942) and "
            "pytorch-wheel (gfx942)"
        ],
    ),
    (
        "default that makes an invalid tag",
        'VLLM_REF = "v0.77.1"',
        'VLLM_REF = "v0 77"',
        ["vllm: tag 'v0 77-9.8.7-full-gfx942' is not a valid OCI tag"],
    ),
    ("no targets", "[[targets]]", "[[targetz]]", ["targetz: unknown key"]),
    (
        "unknown arch in a target's archs",
        'archs = ["gfx942", "gfx950"]',
        'archs = ["gfx942", "gfx905"]',
        ["targets.aiter-wheel.archs: unknown arch 'gfx905'", "did you mean 'gfx950'"],
    ),
    (
        "empty archs",
        'archs = ["gfx942", "gfx950"]',
        "archs = []",
        ["targets.aiter-wheel.archs: must be a non-empty list", "or drop it (every arch)"],
    ),
    (
        "an arch listed twice",
        'archs = ["gfx942", "gfx950"]',
        'archs = ["gfx942", "gfx942"]',
        ["targets.aiter-wheel.archs: lists an arch twice"],
    ),
    (
        "archs on an arch-free target",
        'dockerfile = "docker/Dockerfile.triton"',
        'dockerfile = "docker/Dockerfile.triton"\narchs = ["gfx950"]',
        ["targets.triton-wheel.archs: an arch-free target has no archs", "drop archs"],
    ),
    (
        "an optional parent that is no parent",
        'optional_parents = ["aiter-wheel"]',
        'optional_parents = ["pytorch-src"]',
        ["targets.vllm.optional_parents: 'pytorch-src' is not one of its parents"],
    ),
    (
        "a parent built for fewer archs, not optional",
        'optional_parents = ["aiter-wheel"]',
        "",
        [
            "targets.vllm.parents: parent 'aiter-wheel' is not built for gfx1100, gfx1101, gfx1201",
            "add it to optional_parents (built without it there) or give vllm archs ="
            ' ["gfx942", "gfx950"]',
        ],
    ),
    (
        "an optional parent built for every arch",
        'optional_parents = ["aiter-wheel"]',
        'optional_parents = ["aiter-wheel", "pytorch"]',
        [
            "targets.vllm.optional_parents: 'pytorch' is built for every arch vllm is",
            "drop it from optional_parents",
        ],
    ),
    (
        "a family member that is no known arch",
        'gfx110X = ["gfx1100", "gfx1101"]',
        'gfx110X = ["gfx1100", "gfx1202"]',
        [
            "catalog.toml: families.gfx110X: unknown arch 'gfx1202'; did you mean"
            " 'gfx1201'? known archs: gfx942,"
        ],
    ),
    (
        "a family named like an arch",
        'gfx110X = ["gfx1100", "gfx1101"]',
        'gfx1101 = ["gfx1100", "gfx1101"]',
        ["families.gfx1101: a family is named like an arch; rename the family"],
    ),
    (
        "a family name that cannot stand in a tag",
        'gfx110X = ["gfx1100", "gfx1101"]',
        'gfx110X_all = ["gfx1100", "gfx1101"]',
        ["families.gfx110X_all: bad family name 'gfx110X_all'; letters, digits and '-'"],
    ),
    (
        "a family called all",
        'gfx110X = ["gfx1100", "gfx1101"]',
        'all = ["gfx1100", "gfx1101"]',
        ["families.all: bad family name 'all'"],
    ),
    (
        "a family of one arch",
        'gfx110X = ["gfx1100", "gfx1101"]',
        'gfx110X = ["gfx1100"]',
        [
            "families.gfx110X: must list two archs or more, got ['gfx1100'];"
            " a family of one arch is that arch's image: use the arch"
        ],
    ),
    (
        "a family listing an arch twice",
        'gfx110X = ["gfx1100", "gfx1101"]',
        'gfx110X = ["gfx1100", "gfx1101", "gfx1100"]',
        ["families.gfx110X: lists an arch twice; list it once"],
    ),
    (
        "two families with one set of archs",
        'gfx110X = ["gfx1100", "gfx1101"]',
        'gfx110X = ["gfx1100", "gfx1101"]\ngfx11-both = ["gfx1101", "gfx1100"]',
        ["families.gfx11-both: has the members of family 'gfx110X'; one family per set"],
    ),
]


@pytest.mark.parametrize("desc,old,new,fragments", CATALOG_CASES, ids=[c[0] for c in CATALOG_CASES])
def test_bad_catalogue(run, mutated, desc, old, new, fragments):
    path = mutated(old, new)
    result = run("tags", catalog=path)
    assert result.code == 2, (desc, result)
    assert result.out == ""
    assert result.err.startswith("tagconf: error: catalog.toml")
    assert result.err.count("\n") == 1, "one message, no traceback"
    for fragment in fragments:
        assert fragment in result.err, (desc, fragment, result.err)


def test_missing_catalogue_file(run, tmp_path):
    result = run("check", catalog=tmp_path / "nope.toml")
    assert result.code == 2
    assert "nope.toml: cannot read catalogue" in result.err
    assert "pass --catalog PATH" in result.err
