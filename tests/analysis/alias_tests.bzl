"""Every repository-name alias of a family has the siblings its target has (`.load`, `.push`, ...)."""

load("@bazel_skylib//lib:unittest.bzl", "asserts", "unittest")

def _problems_test_impl(ctx):
    script = ctx.actions.declare_file(ctx.label.name + ".sh")
    lines = ["#!/usr/bin/env bash"]
    for problem in ctx.attr.problems:
        lines.append("echo %s >&2" % repr(problem).replace("$", "\\$"))
    lines.append("echo '%d problem(s), %d aliases checked' >&2" % (len(ctx.attr.problems), ctx.attr.checked))
    lines.append("exit %d" % (1 if ctx.attr.problems else 0))
    ctx.actions.write(script, "\n".join(lines) + "\n", is_executable = True)
    return [DefaultInfo(executable = script)]

_problems_test = rule(
    implementation = _problems_test_impl,
    doc = "Fails listing `problems` (found while the package loaded); passes when there are none.",
    attrs = {
        "checked": attr.int(doc = "How many aliases were checked (a check of none fails)."),
        "problems": attr.string_list(doc = "One line each."),
    },
    test = True,
)

def alias_problems(rules):
    """What the aliases of `rules` (as native.existing_rules() gives them) lack or get wrong.

    For an alias `R` of `:T`, every rule `T<suffix>` (`T.gfx950.load`,
    `T.push.plan`, ...) must have the alias `R<suffix>` pointing at it.

    Args:
      rules: dict name -> rule attributes.

    Returns:
      struct(problems = list[str], checked = int).
    """
    problems = []
    checked = 0
    for alias, attrs in sorted(rules.items()):
        if attrs["kind"] != "alias":
            continue
        actual = str(attrs["actual"]).rpartition(":")[2]
        if actual.startswith(alias + ".") or alias.startswith(actual + "."):
            continue  # an alias of its own sibling, not a repository name
        if any([alias.startswith(a + ".") for a, r in rules.items() if r["kind"] == "alias" and a != alias]):
            continue  # a sibling alias itself (base.gfx950 of base)
        checked += 1
        for name in sorted(rules.keys()):
            if not name.startswith(actual + "."):
                continue
            sibling = alias + name[len(actual):]
            if sibling not in rules:
                problems.append("%s is an alias of %s, but %s has no alias %s" % (alias, actual, name, sibling))
            elif str(rules[sibling].get("actual", "")).rpartition(":")[2] != name:
                problems.append("%s should be an alias of %s, not %s" % (sibling, name, rules[sibling].get("actual")))
    if not checked:
        problems.append("no repository-name alias found: the family makes them (base, runtime)")
    return struct(problems = problems, checked = checked)

def alias_siblings_test(name, **kwargs):
    """A test, declared after the family in its package: every alias has its target's siblings.

    Args:
      name: the test's name.
      **kwargs: common test attributes.
    """
    found = alias_problems(native.existing_rules())
    _problems_test(name = name, problems = found.problems, checked = found.checked, **kwargs)

def _alias_problems_impl(ctx):
    """The check finds a missing sibling alias and a misdirected one, and passes a complete set."""
    env = unittest.begin(ctx)

    def rule_of(kind, actual = None):
        return {"kind": kind, "actual": actual} if actual else {"kind": kind}

    complete = {
        "pytorch-base.gfx950": rule_of("rocm_image_rule"),
        "pytorch-base.gfx950.load": rule_of("image_load"),
        "pytorch-base.push": rule_of("image_push"),
        "base": rule_of("alias", "//images:pytorch-base"),
        "base.gfx950": rule_of("alias", "//images:pytorch-base.gfx950"),
        "base.gfx950.load": rule_of("alias", "//images:pytorch-base.gfx950.load"),
        "base.push": rule_of("alias", "//images:pytorch-base.push"),
    }
    found = alias_problems(complete)
    asserts.equals(env, [], found.problems)
    asserts.equals(env, 1, found.checked)

    missing = dict(complete)
    missing.pop("base.gfx950.load")
    asserts.equals(
        env,
        ["base is an alias of pytorch-base, but pytorch-base.gfx950.load has no alias base.gfx950.load"],
        alias_problems(missing).problems,
    )
    wrong = dict(complete)
    wrong["base.push"] = rule_of("alias", "//images:pytorch.push")
    asserts.equals(
        env,
        ["base.push should be an alias of pytorch-base.push, not //images:pytorch.push"],
        alias_problems(wrong).problems,
    )
    asserts.equals(
        env,
        ["no repository-name alias found: the family makes them (base, runtime)"],
        alias_problems({"pytorch.push": rule_of("image_push")}).problems,
    )
    return unittest.end(env)

alias_problems_test = unittest.make(_alias_problems_impl)
