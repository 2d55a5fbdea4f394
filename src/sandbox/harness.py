"""Runs inside the sandbox worker: load the program, run one test, describe what happened.

This is trusted code, but everything it calls into is not: every call on program objects is
guarded, and the result is a plain dict that the worker serialises."""
import builtins
import sys

import _ldb

# Sources by file name, handed to linecache only when a traceback is formatted: importing
# linecache and traceback up front would cost every run several milliseconds.
_SOURCES = {}

PROGRAM = "program.py"
TEST = "<test>"


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
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename in (PROGRAM, TEST)]
    program_line = None
    test_line = None
    for f in frames:
        if f.filename == PROGRAM:
            program_line = f.lineno
        else:
            test_line = f.line
    try:
        tb = "".join(traceback.format_list(frames))
    except BaseException:
        tb = ""
    tb += type(exc).__name__ + ": " + _safe_str(exc) + "\n"
    return {
        "kind": type(exc).__name__,
        "message": _safe_str(exc),
        "program_line": program_line,
        "test_line": test_line,
        "traceback": tb,
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
        return code
    return 1


def _eval(source, g):
    return eval(compile(source, TEST, "eval", dont_inherit=True), g)


def _run_test(test, g, chars):
    kind = test["kind"]
    if kind == "load_only":
        return _result("passed")
    if kind == "statements":
        _register(TEST, test["source"])
        exec(compile(test["source"], TEST, "exec", dont_inherit=True), g)
        return _result("passed")
    _register(TEST, test.get("source") or test.get("expr") or "")
    if kind == "call":
        value = _eval(test["expr"], g)
        return _result("passed", actual=_ldb.render(value, chars))
    if kind == "assert_truthy":
        value = _eval(test["expr"], g)
        if value:
            return _result("passed")
        return _result("failed", "test", actual=_ldb.render(value, chars))
    if kind == "assert_eq":
        actual = _eval(test["lhs"], g)
        expected = _eval(test["rhs"], g)
        same = bool(actual == expected)
        if same:
            return _result("passed")
        return _result(
            "failed", "test",
            actual=_ldb.render(actual, chars),
            expected=_ldb.render(expected, chars),
        )
    raise ValueError("unknown test kind %r" % kind)


def run(req):
    program = req["program"]
    chars = req["value_chars"]
    _register(PROGRAM, program)
    try:
        code = compile(program, PROGRAM, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        result = _result("error", "compile", exc)
        if isinstance(exc, SyntaxError) and exc.lineno:
            result["exception"]["program_line"] = exc.lineno
        return result
    g = {
        "__name__": "__main__" if req["as_main"] else "__ldb_program__",
        "__builtins__": builtins,
        "__file__": PROGRAM,
    }
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
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass
    return result
