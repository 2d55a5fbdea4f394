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
    test_line = None
    prelude_line = None
    for f in frames:
        if f.filename == PROGRAM:
            program_line = f.lineno
        elif f.filename == PRELUDE:
            if prelude_line is None:
                prelude_line = f.lineno
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
        return code
    return 1


def _eval(source, g):
    return eval(compile(source, TEST, "eval", dont_inherit=True), g)


# --- strict checking (scoring) -----------------------------------------------------------
# Hidden-test scoring must not count programs that fool the checker. Two tricks are closed:
# values whose comparison or truth dunders are code of the program under test (an `__eq__`
# that always returns True, also inside containers), and changes the program makes to
# builtins or to standard modules the tests use (`math.isclose = lambda *a: True`): each
# assert first puts those back. A program that goes after the harness itself (frames, gc) is
# out of reach of any in-process check; see SECURITY.md.

_CHECKED_DUNDERS = (
    "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
    "__bool__", "__len__", "__contains__", "__abs__", "__float__", "__index__", "__int__",
)
# Modules test code commonly relies on, loaded before the program so their state can be kept.
# Kept to cheap ones: this runs before every scored test.
_PRELOADED = ("math", "re", "string", "collections", "itertools", "functools", "operator",
              "heapq", "bisect")
_ELEMENTS_CHECKED = 100000


class _Strict:
    def __init__(self, program_module):
        import operator
        import types
        for name in _PRELOADED:
            try:
                __import__(name)
            except BaseException:
                pass
        self.function_type = types.FunctionType
        self.program_module = program_module
        self.ops = {
            "Eq": operator.eq, "NotEq": operator.ne, "Lt": operator.lt, "LtE": operator.le,
            "Gt": operator.gt, "GtE": operator.ge, "Is": operator.is_, "IsNot": operator.is_not,
            "In": lambda a, b: operator.contains(b, a),
            "NotIn": lambda a, b: not operator.contains(b, a),
        }
        self.modules = dict(sys.modules)
        self.saved = {name: dict(vars(m)) for name, m in self.modules.items()
                      if name in _PRELOADED or name == "builtins"}
        self.isinstance = isinstance
        self.type = type

    def restore(self):
        """Undo the program's changes to builtins and the preloaded modules."""
        for name, module in self.modules.items():
            if sys.modules.get(name) is not module:
                sys.modules[name] = module
        for name, saved in self.saved.items():
            space = vars(self.modules[name])
            for key, value in saved.items():
                if space.get(key, saved) is not value:
                    space[key] = value

    def foreign(self, fn):
        """Whether `fn` is code of the program under test."""
        if self.isinstance(fn, (staticmethod, classmethod)):
            fn = fn.__func__
        if not self.isinstance(fn, self.function_type):
            return False
        return (getattr(fn, "__module__", None) == self.program_module
                or fn.__code__.co_filename in (PROGRAM, "<string>"))

    def untrusted(self, value):
        """The first value (in `value` or its elements) whose type answers comparisons or truth
        tests with program code, or None."""
        stack = [value]
        seen = 0
        while stack and seen < _ELEMENTS_CHECKED:
            v = stack.pop()
            seen += 1
            t = self.type(v)
            for klass in t.__mro__:
                space = vars(klass)
                for name in _CHECKED_DUNDERS:
                    if name in space and self.foreign(space[name]):
                        return v, name
            if t in (list, tuple, set, frozenset):
                stack.extend(v)
            elif t is dict:
                stack.extend(v.keys())
                stack.extend(v.values())
        return None

    def check(self, *values):
        for value in values:
            bad = self.untrusted(value)
            if bad is not None:
                raise AssertionError(
                    "strict scoring: a %s value answers %s with code of the program under test"
                    % (_safe_type_name(bad[0]), bad[1]))

    def compare(self, ops, *operands):
        self.check(*operands)
        for i, op in enumerate(ops):
            if not self.ops[op](operands[i], operands[i + 1]):
                return False
        return True

    def truth(self, value):
        self.check(value)
        return bool(value)

    def transform(self, source, helpers):
        """`source` with each `assert` preceded by a restore and its test routed through the
        checks; `helpers` names the check functions in the test's globals."""
        import ast
        restore, compare, truth = helpers

        def call(name, args):
            return ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=args, keywords=[])

        def wrap(expr):
            if isinstance(expr, ast.Compare):
                ops = ast.Tuple(elts=[ast.Constant(type(o).__name__) for o in expr.ops],
                                ctx=ast.Load())
                return call(compare, [ops, expr.left] + list(expr.comparators))
            if isinstance(expr, ast.BoolOp):
                return ast.BoolOp(op=expr.op, values=[wrap(v) for v in expr.values])
            if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
                return ast.UnaryOp(op=expr.op, operand=wrap(expr.operand))
            return call(truth, [expr])

        class Rewrite(ast.NodeTransformer):
            def visit_Assert(self, node):
                self.generic_visit(node)
                checked = ast.Assert(test=wrap(node.test), msg=node.msg)
                return [ast.Expr(call(restore, [])), ast.copy_location(checked, node)]

        tree = Rewrite().visit(ast.parse(source, TEST))
        return ast.fix_missing_locations(tree)


def _safe_type_name(value):
    try:
        return type(value).__qualname__
    except BaseException:
        return "?"


def _install(strict, g):
    """Puts the check functions in the test's globals under names the program cannot know."""
    import os
    token = os.urandom(6).hex()
    names = ("_ldb_restore_" + token, "_ldb_compare_" + token, "_ldb_truth_" + token)
    for name, fn in zip(names, (strict.restore, strict.compare, strict.truth)):
        g[name] = fn
    return names


def _run_test(test, g, chars, strict=None):
    """Runs one test; with `strict` (scoring), through the checks of `_Strict`."""
    kind = test["kind"]
    if strict is not None:
        strict.restore()
    if kind == "load_only":
        return _result("passed")
    if kind == "statements":
        _register(TEST, test["source"])
        code = test["source"]
        if strict is not None:
            code = strict.transform(code, _install(strict, g))
        exec(compile(code, TEST, "exec", dont_inherit=True), g)
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
        if strict is not None:
            strict.restore()
        if value if strict is None else strict.truth(value):
            return _result("passed")
        return _result("failed", "test", actual=_ldb.render(value, chars))
    if kind == "assert_eq":
        actual = _eval(pad + test["lhs"], g)
        expected = _eval(pad + test["rhs"], g)
        if strict is not None:
            strict.restore()
            strict.check(actual, expected)
        same = bool(actual == expected)
        if same:
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
    module_name = "__main__" if req["as_main"] else "__ldb_program__"
    strict = _Strict(module_name) if req.get("strict") else None
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
    if result is None:
        phase = "load"
        _ldb.trace_start()
        try:
            exec(code, g)
            phase = "test"
            result = _run_test(req["test"], g, chars, strict)
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
