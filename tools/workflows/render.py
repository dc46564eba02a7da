"""The GitHub Actions workflow files of .github/workflows, rendered from the catalogue.

Four tiers (docs/ci.md "GitHub Actions"):

- presubmit (every pull request): lint, the tests that need no engine, the
  fixture family end to end on a loopback registry, the plan of every arch
  and family; reads the team's caches, never writes them;
- postsubmit (main): all of `.ci/run`, the rehearsal included; writes the
  remote cache;
- weekly (schedule, or by hand for one arch or family and one group): the
  main command per arch and family, on the build hosts, signed, then `verify`;
- gpu-smoke (after weekly's publish, on GPU hosts): each published image
  pulled by digest and run on the device.

Every job calls `.ci/run`'s parts or the README's commands, so a step is
written once. What the catalogue gives: the arch and family choices, the
groups, the scheduled matrix. The text is deterministic: `bazel run
//tools/workflows:update` writes it, //tests/generated:workflows_test fails
when the checked-in files are stale.
"""

from __future__ import annotations

from tools.tagconf.model import Catalog

# Actions by commit (a tag can move); the comment names the release.
CHECKOUT = "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2"
UPLOAD = "actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02 # v4.6.2"
DOWNLOAD = "actions/download-artifact@d3f86a106a0bac45b974a628896c90dbdf5c8093 # v4.3.0"
CACHE = "5a3ec84eff668545956fd18022155c47e93e2684 # v4.2.3"
RESTORE = f"actions/cache/restore@{CACHE}"
SAVE = f"actions/cache/save@{CACHE}"
# main's last family report, which postsubmit keeps and a pull request compares with
MAIN_REPORT = ".ci/.cache/main-report.json"

# Runner labels (docs/ci.md): CI hosts (Debian, Docker, ~80 GB free), build
# hosts (the weekly builds: hours per arch, ~200 GB), GPU hosts (one label per
# arch or family they can run, e.g. gfx950).
LABELS = ["rocm-pytorch-ci", "rocm-pytorch-build", "rocm-pytorch-gpu"]
CI_RUNNER = "[self-hosted, linux, x64, rocm-pytorch-ci]"
BUILD_RUNNER = "[self-hosted, linux, x64, rocm-pytorch-build]"
GPU_RUNNER = "[self-hosted, linux, x64, rocm-pytorch-gpu, '${{{{ {arch} }}}}']"

# The scheduled weekly run: every arch and family of the catalogue.
SCHEDULED = "scheduled"

HEADER = """\
# Generated from images/catalog.toml by `bazel run //tools/workflows:update`;
# do not edit (//tests/generated:workflows_test). docs/ci.md explains it.
"""

_CHECKOUT_STEP = f"""\
      - name: Check out
        uses: {CHECKOUT}
        with:
          persist-credentials: false
"""


# weekly's smoke: one per matrix entry, after every publish
_SMOKE_NEEDS = """\
    needs: [matrix, publish]
    strategy:
      fail-fast: false
      matrix:
        arch: ${{ fromJSON(needs.matrix.outputs.variants) }}
"""


def _choices(values: list[str], indent: str) -> str:
    return "".join(f"{indent}- {v}\n" for v in values)


def presubmit(catalog: Catalog) -> str:
    del catalog  # the same jobs whatever the catalogue holds
    jobs = []
    for name, title, part, minutes in [
        ("lint", "Lint: ruff, buildifier, actionlint, zizmor", "lint", 20),
        ("unit", "Tests that need no engine", "unit", 60),
        ("e2e", "The fixture family end to end on a loopback registry", "e2e", 60),
        ("plan", "The plan of every arch and family (builds nothing)", "plan", 30),
    ]:
        jobs.append(f"""\
  {name}:
    name: "{title}"
    runs-on: {CI_RUNNER}
    timeout-minutes: {minutes}
    permissions:
      contents: read
    steps:
{_CHECKOUT_STEP}\
      - name: .ci/run {part}
        env:
          CI_CACHE_READ_ONLY: "1"
        run: .ci/run {part}
""")
    jobs.append(f"""\
  report:
    name: "The fixture family's report against main's: the size gate"
    runs-on: {CI_RUNNER}
    timeout-minutes: 60
    permissions:
      contents: read
    steps:
{_CHECKOUT_STEP}\
      - name: Main's last report (postsubmit keeps it)
        uses: {RESTORE}
        with:
          path: {MAIN_REPORT}
          key: main-report-${{{{ github.event.pull_request.base.sha }}}}
          restore-keys: main-report-
      - name: .ci/run report
        env:
          CI_CACHE_READ_ONLY: "1"
          CI_BASELINE_REPORT: {MAIN_REPORT}
        run: .ci/run report
""")
    return f"""\
{HEADER}\
name: presubmit
on:
  pull_request:
permissions: {{}}
concurrency:
  group: presubmit-${{{{ github.event.pull_request.number }}}}
  cancel-in-progress: true
jobs:
{"".join(jobs)}"""


def postsubmit(catalog: Catalog) -> str:
    del catalog
    return f"""\
{HEADER}\
name: postsubmit
on:
  push:
    branches: [main]
permissions: {{}}
concurrency:
  group: postsubmit-${{{{ github.ref }}}}
  cancel-in-progress: true
jobs:
  all:
    name: ".ci/run: every test, e2e, the rehearsal, the benches' quick modes"
    runs-on: {CI_RUNNER}
    timeout-minutes: 120
    permissions:
      contents: read
    steps:
{_CHECKOUT_STEP}\
      - name: .ci/run (writes the remote cache)
        run: .ci/run
      - name: This report, the next pull requests' baseline
        run: cp .ci/.cache/report.json {MAIN_REPORT}
      - name: Keep it
        uses: {SAVE}
        with:
          path: {MAIN_REPORT}
          key: main-report-${{{{ github.sha }}}}
"""


def weekly(catalog: Catalog) -> str:
    variants = [SCHEDULED, *catalog.variants]
    groups = list(catalog.groups)
    return f"""\
{HEADER}\
name: weekly
on:
  schedule:
    - cron: "0 2 * * 6"
  workflow_dispatch:
    inputs:
      arch:
        description: "An arch or arch family of images/catalog.toml ({SCHEDULED}: every one)"
        type: choice
        default: {SCHEDULED}
        options:
{_choices(variants, "          ")}\
      group:
        description: The group to publish (its push target, //images:push_<group>)
        type: choice
        default: default
        options:
{_choices(groups, "          ")}\
permissions: {{}}
# A publish is never cancelled halfway: a second run waits for the first.
concurrency:
  group: weekly-${{{{ inputs.arch || '{SCHEDULED}' }}}}-${{{{ inputs.group || 'default' }}}}
  cancel-in-progress: false
jobs:
  matrix:
    name: The archs and families to build
    runs-on: {CI_RUNNER}
    timeout-minutes: 10
    permissions:
      contents: read
    outputs:
      variants: ${{{{ steps.matrix.outputs.variants }}}}
    steps:
{_CHECKOUT_STEP}\
      - name: Read them from the catalogue
        id: matrix
        env:
          ARCH: ${{{{ inputs.arch || '{SCHEDULED}' }}}}
        run: python3 -m tools.workflows matrix --arch "$ARCH" >> "$GITHUB_OUTPUT"
  publish:
    name: Build, push, sign and verify ${{{{ matrix.arch }}}}
    needs: matrix
    strategy:
      fail-fast: false
      matrix:
        arch: ${{{{ fromJSON(needs.matrix.outputs.variants) }}}}
    runs-on: {BUILD_RUNNER}
    timeout-minutes: 2880
    environment: publish
    permissions:
      contents: read
    env:
      ARCH: ${{{{ matrix.arch }}}}
      GROUP: ${{{{ inputs.group || 'default' }}}}
    steps:
{_CHECKOUT_STEP}\
      - name: Set the host up (tools/bootstrap.sh)
        run: tools/bootstrap.sh
      - name: Build and publish, signed (bazel run //images:push_<group> --config=release)
        env:
          COSIGN_KEY: ${{{{ secrets.COSIGN_KEY }}}}
          COSIGN_PASSWORD: ${{{{ secrets.COSIGN_PASSWORD }}}}
        run: >-
          bazel run "//images:push_$GROUP" --config=release --define "arch=$ARCH"
          -- --json > "push-$ARCH.json"
      - name: Verify every published tag, its signature, SBOM and provenance
        run: bazel run "//images:push_$GROUP.verify" --config=release --define "arch=$ARCH"
      - name: Every floating tag names its versioned tag's digest (none left stale)
        run: bazel run "//images:push_$GROUP.floating" --define "arch=$ARCH"
      - name: Keep what was published (the GPU smoke pulls it by digest)
        uses: {UPLOAD}
        with:
          name: push-${{{{ matrix.arch }}}}
          path: push-${{{{ matrix.arch }}}}.json
          if-no-files-found: error
{_smoke_job("matrix.arch", "github.run_id", needs=_SMOKE_NEEDS)}"""


def _smoke_job(arch: str, run_id: str, needs: str = "") -> str:
    """The GPU smoke job: weekly's (after publish, per matrix entry) and gpu-smoke's."""
    return f"""\
  gpu-smoke:
    name: Run ${{{{ {arch} }}}}'s published images on the device
{needs}\
    runs-on: {GPU_RUNNER.format(arch=arch)}
    timeout-minutes: 60
    permissions:
      contents: read
      actions: read
    env:
      ARCH: ${{{{ {arch} }}}}
    steps:
{_CHECKOUT_STEP}\
      - name: What weekly published (the push's --json)
        uses: {DOWNLOAD}
        with:
          name: push-${{{{ {arch} }}}}
          run-id: ${{{{ {run_id} }}}}
          github-token: ${{{{ github.token }}}}
      - name: The GPU host's health, then each image pulled by digest and run on the device
        run: python3 -m tools.workflows gpu-smoke --arch "$ARCH" --push "push-$ARCH.json"
"""


def gpu_smoke(catalog: Catalog) -> str:
    variants = list(catalog.variants)
    return f"""\
{HEADER}\
name: gpu-smoke
# Weekly runs this job after each publish; by hand, for a weekly run's images.
on:
  workflow_dispatch:
    inputs:
      arch:
        description: The arch or family whose published images to run
        type: choice
        options:
{_choices(variants, "          ")}\
      run-id:
        description: The weekly run that published them (its number in the run's URL)
        type: string
        required: true
permissions: {{}}
jobs:
{_smoke_job("inputs.arch", "inputs.run-id")}"""


WORKFLOWS = {
    "presubmit.yml": presubmit,
    "postsubmit.yml": postsubmit,
    "weekly.yml": weekly,
    "gpu-smoke.yml": gpu_smoke,
}


def actionlint_config() -> str:
    """.github/actionlint.yaml: the runner labels the workflows use (.ci/actionlint.cjs)."""
    return f"""\
{HEADER}\
self-hosted-runner:
  labels:
{_choices(LABELS, "    ")}"""


def render_all(catalog: Catalog) -> dict[str, str]:
    """{path under .github: text} of every workflow and actionlint's config."""
    files = {f"workflows/{name}": render(catalog) for name, render in WORKFLOWS.items()}
    return {**files, "actionlint.yaml": actionlint_config()}
