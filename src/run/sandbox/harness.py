"""Runs inside the sandbox worker: load the program, run one test, describe what happened.

This is trusted code, but everything it calls into is not: every call on program objects is
guarded, and the result is a plain dict that the worker serialises."""
import builtins
import os
import sys

import _ldb


def _setup_site():
    """A user's environment (`ldb test --venv`, an active virtualenv): its site-packages with
    their .pth files, and without the system's when the virtualenv does not include them."""
    dirs = os.environ.get("LDB_SITE_DIRS")
    if not dirs:
        return
    import site
    system = set(site.getsitepackages())
    if os.environ.get("LDB_NO_SYSTEM_SITE") == "1":
        sys.path[:] = [p for p in sys.path if p not in system]
    before = list(sys.path)
    for d in dirs.split(os.pathsep):
        if d:
            site.addsitedir(d)
    # As in the virtualenv itself: its packages come before the system's.
    added = [p for p in sys.path if p not in before]
    rest = [p for p in sys.path if p in before]
    at = next((i for i, p in enumerate(rest) if p in system), len(rest))
    sys.path[:] = rest[:at] + added + rest[at:]


_setup_site()
# Sources by file name, handed to linecache only when a traceback is formatted: importing
# linecache and traceback up front would cost every run several milliseconds.
_SOURCES = {}

PROGRAM = "program.py"
TEST = "<test>"
PRELUDE = "<prelude>"


def _register(name, text):
    _SOURCES[name] = text


def _safe_str(obj, limit=2000):
    try:
        text = str(obj)
    except BaseException:
        return "<str() raised>"
    return text if len(text) <= limit else text[:limit] + "…[+%d chars]" % (len(text) - limit)


def _exception(exc):
    import linecache
    import traceback

    for name, text in _SOURCES.items():
        # Lets tracebacks show the program's and the test's source lines.
        linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if f.filename in (PROGRAM, TEST, PRELUDE)]
    program_line = None
    # Lines of the program's frames, outermost first: the raise is the last, the calls that
    # led to it come before.
    program_frames = []
    test_line = None
    prelude_line = None
    for f in frames:
        if f.filename == PROGRAM:
            program_line = f.lineno
            program_frames.append(f.lineno)
        elif f.filename == PRELUDE:
            if prelude_line is None:
                prelude_line = f.lineno
        else:
            test_line = f.line
    try:
        tb = "".join(traceback.format_list(frames))
    except BaseException:
        tb = ""
    remote = getattr(exc, "_ldb_remote", None)
    if type(remote) is dict:
        # Raised in the program's process of a scored run (see split.py): the test's frames
        # are ours, the program's come from there.
        return {
            "kind": remote["kind"],
            "message": remote["message"],
            "program_line": remote["program_line"],
            "program_callers": remote.get("program_callers") or [],
            "test_line": test_line,
            "traceback": tb + remote["traceback"],
            "prelude_line": remote["prelude_line"],
        }
    tb += type(exc).__name__ + ": " + _safe_str(exc) + "\n"
    return {
        "kind": type(exc).__name__,
        "message": _safe_str(exc),
        "program_line": program_line,
        "program_callers": program_frames[:-1][-16:],
        "test_line": test_line,
        "traceback": tb,
        "prelude_line": prelude_line,
    }


def _result(status, phase=None, exc=None, actual=None, expected=None, exit_code=None):
    return {
        "status": status,
        "phase": phase,
        "exception": _exception(exc) if exc is not None else None,
        "actual": actual,
        "expected": expected,
        "exit_code": exit_code,
    }


def _exit_code(exc):
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        # A bool is an int (`exit(False)` is status 0) but would reach the protocol as JSON
        # `false`; a status beyond 64 bits has no meaning there either.
        code = int(code)
        return code if -(2**63) <= code < 2**63 else 1
    return 1


def _eval(source, g):
    return eval(compile(source, TEST, "eval", dont_inherit=True), g)


def _run_test(test, g, chars):
    """Runs one test in the globals `g`."""
    kind = test["kind"]
    if kind == "load_only":
        return _result("passed")
    if kind == "statements":
        _register(TEST, test["source"])
        exec(compile(test["source"], TEST, "exec", dont_inherit=True), g)
        return _result("passed")
    _register(TEST, test.get("source") or test.get("expr") or "")
    setup = test.get("setup") or ""
    if setup:
        # What the assert needs (imports, helpers of a test file), in the same globals.
        exec(compile(setup, TEST, "exec", dont_inherit=True), g)
    # The assert follows its set-up: padding keeps its line number in tracebacks.
    pad = "\n" * setup.count("\n")
    if kind == "call":
        value = _eval(test["expr"], g)
        return _result("passed", actual=_ldb.render(value, chars))
    if kind == "assert_truthy":
        value = _eval(pad + test["expr"], g)
        if value:
            return _result("passed")
        return _result("failed", "test", actual=_ldb.render(value, chars))
    if kind == "assert_eq":
        actual = _eval(pad + test["lhs"], g)
        expected = _eval(pad + test["rhs"], g)
        if bool(actual == expected):
            return _result("passed")
        return _result(
            "failed", "test",
            actual=_ldb.render(actual, chars),
            expected=_ldb.render(expected, chars),
        )
    raise ValueError("unknown test kind %r" % kind)


def _run_prelude(prelude, g):
    """Runs the prelude in the program's namespace; a result when it did not finish."""
    if prelude is None:
        return None
    # Untraced and compiled under its own name, so the program keeps its own line numbers.
    _register(PRELUDE, prelude)
    try:
        exec(compile(prelude, PRELUDE, "exec", dont_inherit=True), g)
    except SystemExit as exc:
        return _result("exited", "prelude", exit_code=_exit_code(exc))
    except BaseException as exc:
        result = _result("error", "prelude", exc)
        if isinstance(exc, SyntaxError) and exc.filename == PRELUDE and exc.lineno:
            result["exception"]["prelude_line"] = exc.lineno
        return result
    return None


def prepare(req):
    """Compiles the program and makes its globals (with the prelude run in them).

    Returns (code, globals, None), or (None, None, result) when it stops before the program
    runs."""
    program = req["program"]
    _register(PROGRAM, program)
    try:
        code = compile(program, PROGRAM, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        result = _result("error", "compile", exc)
        if isinstance(exc, SyntaxError) and exc.lineno:
            result["exception"]["program_line"] = exc.lineno
        return None, None, result
    module_name = "__main__" if req["as_main"] else "__ldb_program__"
    alias = req.get("module")
    g = {
        "__name__": module_name,
        "__builtins__": builtins,
        "__file__": PROGRAM,
    }
    if req["as_main"] or alias:
        # The program's globals are a real module's namespace: a script's is the real `__main__`
        # (pickle, multiprocessing and `import __main__` find what it defines), and under the
        # name a test file imports it by (`from prog import f`) the import finds this very
        # program.
        import types
        module = types.ModuleType(module_name)
        module.__dict__.update(g)
        if req["as_main"]:
            sys.modules[module_name] = module
        if alias:
            sys.modules[alias] = module
        g = module.__dict__
    result = _run_prelude(req.get("prelude"), g)
    if result is not None:
        return None, None, result
    return code, g, None


def flush_streams():
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass


def run(req):
    chars = req["value_chars"]
    home = req.get("home")
    if home:
        # A warm worker's child: its interpreter started before the run had a work dir.
        os.environ["HOME"] = home
        os.environ["TMPDIR"] = home
    code, g, result = prepare(req)
    if result is None:
        phase = "load"
        _ldb.trace_start()
        try:
            exec(code, g)
            phase = "test"
            result = _run_test(req["test"], g, chars)
        except _ldb.TraceDeadline:
            result = _result("timeout", phase)
        except SystemExit as exc:
            result = _result("exited", phase, exit_code=_exit_code(exc))
        except AssertionError as exc:
            result = _result("failed" if phase == "test" else "error", phase, exc)
        except BaseException as exc:
            result = _result("error", phase, exc)
        finally:
            _ldb.trace_stop()
    flush_streams()
    return result
