"""py_launch: a py_binary's sources compiled at build time, and how to start it with one interpreter.

rules_python 0.22.1 (the version Debian packages) starts a py_binary with a
Python bootstrap that execs a second interpreter (its shell bootstrap,
`bootstrap_impl=script`, came later), and it ships no bytecode: an
interpreter that may not write `__pycache__` (PYTHONDONTWRITEBYTECODE, a
read-only tree) compiles every module on every start, which for the
registry tool and httpx is most of a no-op push. A launcher that starts
the program through `PyLaunchInfo` (images/private/push.bzl) runs one
interpreter on the main file with the PYTHONPATH the bootstrap would give,
and finds every module of the program already compiled.
"""

PyLaunchInfo = provider(
    doc = "How to start a py_binary's main file directly, from its runfiles root.",
    fields = {
        "main": "runfiles path of the main file (`_main/tools/registry/__main__.py`)",
        "python_path": "runfiles paths for PYTHONPATH, in the bootstrap's order",
    },
)

def _runfiles_path(ctx, f):
    """A file's path under the runfiles root (`_main/...`, `<repo>/...`)."""
    if f.short_path.startswith("../"):
        return f.short_path[3:]
    return ctx.workspace_name + "/" + f.short_path

def _py_launch_impl(ctx):
    binary = ctx.attr.binary
    sources = [
        f
        for f in binary[DefaultInfo].default_runfiles.files.to_list()
        if f.extension == "py"
    ]
    by_dir = {}
    for f in sources:
        d = _runfiles_path(ctx, f).rpartition("/")[0]
        by_dir.setdefault(d, []).append(f)
    caches = {}
    lines = []
    for d, files in by_dir.items():
        cache = ctx.actions.declare_directory("%s.pyc/%s/__pycache__" % (ctx.label.name, d))
        caches[d + "/__pycache__"] = cache
        lines.extend(["%s\t%s" % (f.path, cache.path) for f in files])
    args = ctx.actions.declare_file(ctx.label.name + ".pyc.args")
    ctx.actions.write(args, "\n".join(lines) + "\n")
    ctx.actions.run(
        executable = ctx.executable._compile,
        arguments = [args.path],
        inputs = sources + [args],
        outputs = caches.values(),
        mnemonic = "PyCompile",
        progress_message = "Compiling the Python sources of %s" % binary.label,
    )
    imports = binary[PyInfo].imports.to_list() if PyInfo in binary else []
    main = _runfiles_path(ctx, ctx.file.main)
    return [
        DefaultInfo(
            runfiles = ctx.runfiles(root_symlinks = caches).merge(
                binary[DefaultInfo].default_runfiles,
            ),
        ),
        PyLaunchInfo(
            main = main,
            # the bootstrap's order: the runfiles root, the imports, the main repository
            python_path = [""] + imports + ([] if ctx.workspace_name in imports else [ctx.workspace_name]),
        ),
    ]

py_launch = rule(
    implementation = _py_launch_impl,
    doc = """A py_binary's runfiles with build-time bytecode, and `PyLaunchInfo` to start it.

Each `.py` of the binary's runfiles gets a checked-hash pyc in the
`__pycache__` next to it in the runfiles tree (the interpreter checks the
source's hash, so a stale one is never run). The pycs are made by the exec
configuration's interpreter, the one `bazel run` programs run with here
(sid's Python 3.14); any other interpreter ignores them.
""",
    attrs = {
        "binary": attr.label(
            doc = "The py_binary.",
            mandatory = True,
            providers = [PyInfo],
        ),
        "main": attr.label(
            doc = "Its main file.",
            mandatory = True,
            allow_single_file = [".py"],
        ),
        "_compile": attr.label(
            default = Label("//tools/python:compile_pyc"),
            executable = True,
            cfg = "exec",
        ),
    },
)
