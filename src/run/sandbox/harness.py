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


# What the harness decides with, taken before any program runs: a program that rebinds these
# names in `builtins` changes nothing here (the worker also checks, after the run, that they
# were not rebound at all).
_bool = builtins.bool
_type = builtins.type
_compile = builtins.compile
_builtin_eval = builtins.eval
_builtin_exec = builtins.exec
_dict, _list, _tuple, _set, _frozenset = (
    builtins.dict, builtins.list, builtins.tuple, builtins.set, builtins.frozenset,
)
_iter, _next, _any = builtins.iter, builtins.next, builtins.any
_type_mro = builtins.type.__dict__["__mro__"].__get__
_type_dict = builtins.type.__dict__["__dict__"].__get__
_type_name = builtins.type.__dict__["__name__"].__get__
# Values whose `==` and truth only built-in code decides.
_PLAIN = (int, float, complex, str, bytes, bool, type(None))
# What a C type's dictionary holds for a special method: a slot wrapper or a method
# descriptor, each naming the type it belongs to.
_C_METHODS = (type(object.__eq__), type(list.append))
# Containers, and how to read their elements as the base type holds them (without the code of
# a subclass).
_CONTAINERS = (
    (_dict, lambda v: (x for kv in _dict.items(v) for x in kv)),
    (_list, _list.__iter__), (_tuple, _tuple.__iter__),
    (_set, _set.__iter__), (_frozenset, _frozenset.__iter__),
)
_CONTAINER_TYPES = _tuple(c for c, _ in _CONTAINERS)
# Elements looked at in one value at most.
_WALK_LIMIT = 100_000


def _standard_methods():
    """The Python-level special methods of standard classes whose comparisons and truth are
    trusted like built-in code's (a `Counter` compares with a dict), taken at load."""
    import collections
    import collections.abc
    import enum
    found = []
    for klass, names in (
        (collections.Counter, ("__eq__", "__ne__")),
        (collections.UserDict, ("__eq__",)),
        (collections.UserList, ("__eq__", "__len__")),
        (collections.UserString, ("__eq__", "__len__")),
        (collections.abc.Mapping, ("__eq__",)),
        (collections.abc.Set, ("__eq__",)),
        (enum.Flag, ("__bool__",)),
        (enum.Enum, ("__bool__",)),
    ):
        for name in names:
            method = _type_dict(klass).get(name)
            if method is not None:
                found.append(method)
    return _tuple(found)


_STANDARD_METHODS = _standard_methods()


def _one_of(t, types):
    # By identity: `in` would ask the type's metaclass for `==`.
    for u in types:
        if t is u:
            return True
    return False


def _own_method(value, name):
    """The class (of `value`) whose Python code implements special method `name`, or None when
    built-in code (or a trusted standard class's) does. For `"truth"`, `__bool__`, else
    `__len__`, as `bool()` looks them up."""
    if name == "truth":
        mro = _type_mro(_type(value))
        defines = lambda n: _any(_type_dict(k).get(n) is not None for k in mro)
        name = "__bool__" if defines("__bool__") else "__len__"
    for klass in _type_mro(_type(value)):
        found = _type_dict(klass).get(name)
        if found is None:
            continue
        if _one_of(found, _STANDARD_METHODS):
            return None
        # A C type's own slot: one the class merely holds (`__eq__ = (0).__ne__`) is not.
        if _one_of(_type(found), _C_METHODS) and found.__objclass__ is klass:
            return None
        return klass
    return None


def _elements(value):
    """The elements of a built-in container (or a subclass's, read as the base type holds
    them), or None; by the type's MRO, not `isinstance` (which a proxy answers)."""
    mro = _type_mro(_type(value))
    for base, items in _CONTAINERS:
        if _one_of(base, mro):
            return items(value)
    return None


_END = object()
_CUT = object()


def _walk(value):
    """`value` and its elements, depth first, all the way down (one at a time: a huge
    container is not copied); after `_WALK_LIMIT` of them, `_CUT` and the end."""
    stack, seen = [_iter((value,))], 0
    while stack:
        v = _next(stack[-1], _END)
        if v is _END:
            stack.pop()
            continue
        seen += 1
        if seen > _WALK_LIMIT:
            yield _CUT
            return
        yield v
        if not _one_of(_type(v), _PLAIN):
            items = _elements(v)
            if items is not None:
                stack.append(_iter(items))


def _plain(value):
    """Only built-in values (of exactly built-in types), all the way down."""
    for v in _walk(value):
        if v is _CUT:
            return False
        t = _type(v)
        if not (_one_of(t, _PLAIN) or _one_of(t, _CONTAINER_TYPES)):
            return False
    return True


def _decided_by_own_code(value, name):
    """The name of a class of the value (or of an element of it, for `__eq__`) whose own
    Python code implements `name` (`__eq__`, or `"truth"`), so that it, not the test,
    decides; or None."""
    values = _walk(value) if name == "__eq__" else _iter((value,))
    for v in values:
        if v is _CUT:
            break
        if _one_of(_type(v), _PLAIN):
            continue
        klass = _own_method(v, name)
        if klass is not None:
            return _type_name(klass)
    return None


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
    return _builtin_eval(_compile(source, TEST, "eval", dont_inherit=True), g)


def _not_equal(klass):
    return AssertionError(
        "the actual value is or holds a %s, whose own __eq__ decides the test; against a "
        "built-in expected value only a value built-in code compares passes" % klass
    )


def _not_truth(klass):
    return AssertionError(
        "the value is a %s, whose own __bool__ or __len__ decides the test; an assert on "
        "a value's truth passes only on one built-in code judges" % klass
    )


def _run_test(test, g, chars, _bool=_bool, _plain=_plain, _own=_decided_by_own_code):
    """Runs one test in the globals `g`. The helpers that decide are bound at load, so a
    program that rebinds the module's names does not reach them (the worker's check after the
    run names the rebinding)."""
    kind = test["kind"]
    if kind == "load_only":
        return _result("passed")
    if kind == "statements":
        _register(TEST, test["source"])
        _builtin_exec(_compile(test["source"], TEST, "exec", dont_inherit=True), g)
        return _result("passed")
    _register(TEST, test.get("source") or test.get("expr") or "")
    setup = test.get("setup") or ""
    if setup:
        # What the assert needs (imports, helpers of a test file), in the same globals.
        _builtin_exec(_compile(setup, TEST, "exec", dont_inherit=True), g)
    # The assert follows its set-up: padding keeps its line number in tracebacks.
    pad = "\n" * setup.count("\n")
    if kind == "call":
        value = _eval(test["expr"], g)
        return _result("passed", actual=_ldb.render(value, chars))
    if kind == "assert_truthy":
        value = _eval(pad + test["expr"], g)
        if _bool(value):
            own = _own(value, "truth")
            if own is None:
                return _result("passed")
            return _result(
                "failed", "test", _not_truth(own),
                actual=_ldb.render(value, chars),
            )
        return _result("failed", "test", actual=_ldb.render(value, chars))
    if kind == "assert_eq":
        actual = _eval(pad + test["lhs"], g)
        expected = _eval(pad + test["rhs"], g)
        if _bool(actual == expected):
            # An object equal to everything passes `==`; against a built-in expected value,
            # only built-in comparisons count.
            own = _plain(expected) and _own(actual, "__eq__")
            if not own:
                return _result("passed")
            return _result(
                "failed", "test", _not_equal(own),
                actual=_ldb.render(actual, chars),
                expected=_ldb.render(expected, chars),
            )
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
