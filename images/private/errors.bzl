"""How the rules name a bad input: one line, and the names it is likely a typo of."""

def edit_distance(a, b):
    """Levenshtein distance of two strings.

    Args:
      a: str.
      b: str.

    Returns:
      int.
    """
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
        previous = current
    return previous[len(b)]

def nearest_names(name, known):
    """The names of `known` closest to `name`: the likely typos it is.

    A name that differs only in case comes first and alone (`GFX950` is
    `gfx950`); else the names at the least edit distance (case ignored), if
    that is at most 2 or a quarter of the name, all of them when several are
    as close (`gfx1202`: gfx1102, gfx1200 and gfx1201), in `known`'s order.

    Args:
      name: str, the unknown name.
      known: list[str].

    Returns:
      list[str], empty when none is close.
    """
    same = [k for k in known if k.lower() == name.lower()]
    if same:
        return same[:1]
    best = None
    close = []
    for candidate in known:
        d = edit_distance(name.lower(), candidate.lower())
        if d > max(2, len(candidate) // 4):
            continue
        if best == None or d < best:
            best = d
            close = [candidate]
        elif d == best:
            close.append(candidate)
    return close

def analysis_error(ctx, message, subject = None, attribute = "--define"):
    """Fails analysis of `ctx`'s target with `message` on one line, without a Starlark traceback.

    `fail()` in a rule implementation prints `Traceback (most recent call
    last):` and two lines per Starlark frame before the message (7 lines for
    a check two calls deep). An attribute error prints one line, and
    `ctx.expand_make_variables` reports an undefined variable as an error of
    the attribute it is given by name, so Bazel 7.7.1 prints

        ERROR: <BUILD file>:<line>:<col>: in <message> -- from the --define attribute of <rule> rule <label>: $(<subject>) not defined

    The target fails analysis as with `fail()` (its dependents are not
    analysed; `analysistest` sees the message in AnalysisFailureInfo). The
    caller returns at once with the value returned here, which Bazel
    discards. .ci/e2e_checks.py (`_bad_defines`) holds the output to this
    shape.

    Args:
      ctx: rule context.
      message: str, one line: the input at fault and the fix.
      subject: str or None, what is not defined (`group=nosuch`); None: the
        `KEY=VALUE` of a message that starts `--define KEY=VALUE: ` or
        `--KEY=VALUE: ` (a build setting's).
      attribute: str, what the message is about, for the line's tail
        (`--define`, or a build setting's flag).

    Returns:
      list: no providers.
    """
    if subject == None:
        subject = message.partition(": ")[0]
        for prefix in ["--define ", "--"]:
            if subject.startswith(prefix):
                subject = subject[len(prefix):]
                break

    # A space or `)` would end the variable's name, a `$` start another.
    name = "".join(["_" if c in " ()$" else c for c in subject.elems()])
    ctx.expand_make_variables("%s -- from the %s" % (message, attribute), "$(%s)" % name, {})
    return []
