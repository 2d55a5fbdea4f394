"""Runs one pytest session inside the sandbox and describes every node as data.

Loaded as module `ldb_pytest`: a warm worker imports it, with pytest and pytest's built-in
plugins, before it forks any run. The harness calls `run` for a `pytest` test. The `Reporter`
plugin records, per node, its outcome, its duration, the exception with the program line and
the test line it came from, and the two values a failed comparison compared (pytest's own
assertion rewriting hands them to `pytest_assertrepr_compare`). Collection errors, skips and
xfails are recorded as such. Nothing here reads pytest's text output."""
import os
import signal
import sys
import threading
import time

import _ldb
import ldb_harness

try:
    import pytest
    import _pytest.config
except BaseException as _exc:  # no pytest in this environment, or a broken one
    pytest = None
    IMPORT_ERROR = "%s: %s" % (type(_exc).__name__, ldb_harness._safe_str(_exc))
else:
    IMPORT_ERROR = None
    import importlib

    # pytest imports these on every start; done once here, every run finds them loaded.
    for _name in tuple(_pytest.config.essential_plugins) + tuple(_pytest.config.default_plugins):
        try:
            importlib.import_module("_pytest." + _name)
        except BaseException:
            pass
    import inspect
    import textwrap
    import traceback

    try:
        import pluggy._hooks as _pluggy_hooks
    except BaseException:
        _pluggy_hooks = None
    if _pluggy_hooks is not None and callable(getattr(_pluggy_hooks, "varnames", None)):
        # pluggy reads every hook function's signature again in every session; a warm
        # worker's built-in plugins are the same functions in every run.
        _varnames = _pluggy_hooks.varnames
        _varnames_seen = {}

        def _cached_varnames(func):
            try:
                return _varnames_seen[func]
            except KeyError:
                found = _varnames_seen[func] = _varnames(func)
                return found
            except TypeError:
                return _varnames(func)

        _pluggy_hooks.varnames = _cached_varnames


class NodeTimeout(BaseException):
    """Raised in a node that ran past its time limit."""


def _on_alarm(signum, frame):
    raise NodeTimeout("the test ran past its time limit")


def _original(exc):
    """The exception behind pytest's wrappers (a collection error, a conftest that failed)."""
    seen = 0
    while exc is not None and seen < 8:
        seen += 1
        name = type(exc).__name__
        if name not in ("CollectError", "ConftestImportFailure"):
            break
        cause = getattr(exc, "cause", None)
        info = getattr(exc, "excinfo", None)
        if cause is None and isinstance(info, tuple) and len(info) == 3:
            cause = info[1]
        if cause is None:
            cause = exc.__cause__ or exc.__context__
        if cause is None:
            break
        exc = cause
    return exc


def _missing_module(exc):
    if isinstance(exc, ModuleNotFoundError) and isinstance(exc.name, str):
        return exc.name
    return None


def _imported(path):
    """Whether a module was imported from `path`."""
    if not path:
        return None
    real = os.path.realpath(path)
    for module in list(sys.modules.values()):
        f = getattr(module, "__file__", None)
        if isinstance(f, str) and os.path.realpath(f) == real:
            return True
    return False


def _test_named(name):
    """Whether a file's name says it holds tests (pytest's default patterns) or fixtures."""
    return name == "conftest.py" or name.startswith("test_") or name.endswith("_test.py")


class Reporter:
    """The plugin: every node's result, as data."""

    def __init__(self, module_file, chars, node_timeout, trace, collect_only, first=(),
                 cover=None, keep_going=False):
        self.module_file = module_file
        # Node ids that run before every other node; when one of them fails, the session
        # stops after the last of them (the others are regression tests, worth running only
        # for a program that passes these).
        self.first = list(first or ())
        self.first_left = set(self.first)
        self.first_failed = False
        self.keep_going = keep_going
        self.session = None
        # Lines (first, last) of the module file: each node says whether it ran code there.
        self.cover = tuple(cover) if cover else None
        self.covered = False
        # The project's files whose executed lines each node reports (`trace_project`).
        self.project_root = None
        self.project_skip = ()
        self.project_lines = None
        self.project_files = {}
        self.chars = chars
        self.node_timeout = node_timeout
        self.trace = trace
        self.collect_only = collect_only
        self.rootdir = None
        self.inifile = None
        self.usage_error = None
        self.collect_errors = []
        self.collect_exc = {}
        self.items = []
        self.nodes = {}
        self.compared = None
        self.module_imported = None

    # Configuration and collection.

    def pytest_configure(self, config):
        self.rootdir = str(config.rootpath)
        inipath = getattr(config, "inipath", None)
        self.inifile = str(inipath) if inipath else None

    @pytest.hookimpl(hookwrapper=True) if pytest else (lambda f: f)
    def pytest_load_initial_conftests(self, early_config):
        outcome = yield
        if self.rootdir is None and getattr(early_config, "rootpath", None) is not None:
            self.rootdir = str(early_config.rootpath)
        if outcome.excinfo is not None:
            exc = outcome.excinfo[1]
            path = getattr(exc, "path", None)
            self.collect_errors.append({
                "nodeid": self._relative(str(path)) if path else "conftest.py",
                "exception": self._exception(_original(exc), str(path) if path else None),
                "missing_module": _missing_module(_original(exc)),
            })

    @pytest.hookimpl(hookwrapper=True) if pytest else (lambda f: f)
    def pytest_collection(self, session):
        outcome = yield
        if outcome.excinfo is not None:
            exc = outcome.excinfo[1]
            if type(exc).__name__ == "UsageError":
                self.usage_error = " ".join(ldb_harness._safe_str(a) for a in exc.args)

    def pytest_collectstart(self, collector):
        collect = collector.collect
        errors = self.collect_exc

        path = getattr(collector, "path", None)

        def guarded():
            try:
                return collect()
            except BaseException as exc:
                errors[collector.nodeid] = (exc, str(path) if path is not None else None)
                raise

        try:
            collector.collect = guarded
        except (AttributeError, TypeError):
            pass

    def pytest_collectreport(self, report):
        if not report.failed:
            return
        exc, path = self.collect_exc.get(report.nodeid, (None, None))
        if exc is not None:
            info = self._exception(_original(exc), path)
        else:
            info = {
                "kind": "CollectError",
                "message": ldb_harness._safe_str(getattr(report, "longreprtext", "")),
                "program_line": None,
                "test_line": None,
                "traceback": "",
            }
        self.collect_errors.append({
            "nodeid": report.nodeid,
            "exception": info,
            "missing_module": _missing_module(_original(exc)),
        })

    def pytest_collection_modifyitems(self, session, config, items):
        self.session = session
        if not self.first:
            return
        rank = {nodeid: i for i, nodeid in enumerate(self.first)}
        head = sorted((it for it in items if it.nodeid in rank), key=lambda it: rank[it.nodeid])
        tail = [it for it in items if it.nodeid not in rank]
        items[:] = head + tail

    def pytest_collection_finish(self, session):
        if self.collect_only:
            for item in session.items:
                self.items.append(self._describe(item))
            self.module_imported = _imported(self.module_file)

    # Running.

    @pytest.hookimpl(hookwrapper=True, tryfirst=True) if pytest else (lambda f: f)
    def pytest_runtest_protocol(self, item, nextitem):
        self.compared = None
        node = self._node(item)
        if self.node_timeout > 0:
            signal.setitimer(signal.ITIMER_REAL, self.node_timeout)
        covering = self.cover is not None
        if covering:
            self.covered = False
            threading.setprofile(self._profile)
            sys.setprofile(self._profile)
        tracing = self.project_root is not None
        if tracing:
            self.project_lines = {}
            self.project_entries = set()
            threading.settrace(self._project_call)
            sys.settrace(self._project_call)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            if covering:
                sys.setprofile(None)
                threading.setprofile(None)
                node["covered"] = self.covered
            if tracing:
                sys.settrace(None)
                threading.settrace(None)
                node["lines"] = {f: sorted(ls) for f, ls in self.project_lines.items()}
                node["entries"] = sorted([f, line] for f, line in self.project_entries)
            if item.nodeid in self.first_left:
                self.first_left.discard(item.nodeid)
                if node["outcome"] not in ("passed", "xpassed", "skipped", "xfailed"):
                    self.first_failed = True
                if not self.first_left and self.first_failed and not self.keep_going \
                        and self.session is not None:
                    self.session.shouldstop = "a test the program must fix failed"

    def _in_project(self, filename):
        known = self.project_files.get(filename)
        if known is None:
            real = os.path.realpath(filename) if filename else ""
            known = bool(real) and real.endswith(".py") and \
                real.startswith(self.project_root + os.sep) and \
                not any(real == p or real.startswith(p + os.sep) for p in self.project_skip) \
                and not _test_named(os.path.basename(real))
            self.project_files[filename] = known
        return known

    def _project_call(self, frame, event, arg):
        if event != "call" or not self._in_project(frame.f_code.co_filename):
            return None
        lines = self.project_lines.setdefault(frame.f_code.co_filename, set())
        lines.add(frame.f_lineno)
        back = frame.f_back
        if back is None or not self._in_project(back.f_code.co_filename):
            # Called from outside the project's code: by the test (or a fixture).
            self.project_entries.add((frame.f_code.co_filename, frame.f_code.co_firstlineno))

        def local(frame, event, arg):
            if event == "line":
                lines.add(frame.f_lineno)
            return local
        return local

    def _profile(self, frame, event, arg):
        if event != "call" or self.covered:
            return
        code = frame.f_code
        if code.co_filename == self.module_file and \
                self.cover[0] <= code.co_firstlineno <= self.cover[1]:
            self.covered = True

    @pytest.hookimpl(hookwrapper=True) if pytest else (lambda f: f)
    def pytest_runtest_call(self, item):
        # Only the test's own call is traced: not collection, not fixtures.
        if self.trace:
            _ldb.trace_start()
        try:
            yield
        finally:
            if self.trace:
                _ldb.trace_stop()

    def pytest_assertrepr_compare(self, config, op, left, right):
        self.compared = (op, _ldb.render(left, self.chars), _ldb.render(right, self.chars))
        return None

    @pytest.hookimpl(hookwrapper=True, tryfirst=True) if pytest else (lambda f: f)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        try:
            rep = outcome.get_result()
        except BaseException:
            return
        node = self._node(item)
        node["duration_ms"] += float(getattr(rep, "duration", 0.0)) * 1000.0
        wasxfail = getattr(rep, "wasxfail", None)
        failed_already = node["outcome"] in ("failed", "error", "timeout")
        if rep.failed:
            if failed_already:
                return
            exc = call.excinfo.value if call.excinfo is not None else None
            if isinstance(exc, (NodeTimeout, _ldb.TraceDeadline)):
                node["outcome"] = "timeout"
            elif rep.when == "call" and (exc is None or isinstance(exc, AssertionError)):
                node["outcome"] = "failed"
            else:
                node["outcome"] = "error"
            node["when"] = rep.when
            if exc is not None:
                node["exception"] = self._exception(exc, str(item.path))
            else:
                node["exception"] = {
                    "kind": "Failed",
                    "message": ldb_harness._safe_str(getattr(rep, "longreprtext", "")),
                    "program_line": None,
                    "test_line": None,
                    "traceback": "",
                }
            if node["outcome"] == "failed" and self.compared is not None:
                node["op"], node["left"], node["right"] = self.compared
        elif rep.skipped:
            if failed_already:
                return
            node["when"] = rep.when
            if wasxfail is not None:
                node["outcome"] = "xfailed"
                node["reason"] = wasxfail or None
            else:
                node["outcome"] = "skipped"
                longrepr = rep.longrepr
                reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else None
                if isinstance(reason, str) and reason.startswith("Skipped: "):
                    reason = reason[len("Skipped: "):]
                node["reason"] = reason
        elif rep.when == "call" and not failed_already:
            node["outcome"] = "xpassed" if wasxfail is not None else "passed"
            node["when"] = "call"

    # Helpers.

    def _node(self, item):
        node = self.nodes.get(item.nodeid)
        if node is None:
            node = {
                "nodeid": item.nodeid,
                "outcome": "not_run",
                "when": None,
                "duration_ms": 0.0,
                "exception": None,
                "op": None,
                "left": None,
                "right": None,
                "reason": None,
                "covered": None,
            }
            self.nodes[item.nodeid] = node
        return node

    def _relative(self, path):
        if self.rootdir and path.startswith(self.rootdir + os.sep):
            return path[len(self.rootdir) + 1:]
        return path

    def _exception(self, exc, test_path):
        frames = traceback.extract_tb(exc.__traceback__)
        program_line = None
        test_line = None
        test_location = None
        kept = []
        for f in frames:
            if f.filename == self.module_file:
                program_line = f.lineno
            elif test_path and f.filename == test_path:
                test_line = f.line
                test_location = "%s:%d" % (self._relative(f.filename), f.lineno)
            if f.filename == self.module_file or (
                    self.rootdir and f.filename.startswith(self.rootdir + os.sep)):
                kept.append(f)
        if isinstance(exc, SyntaxError) and exc.filename and exc.lineno:
            if exc.filename == self.module_file:
                program_line = exc.lineno
            elif test_path and exc.filename == test_path:
                test_location = "%s:%d" % (self._relative(exc.filename), exc.lineno)
                test_line = (exc.text or "").strip() or None
        project_frames = []
        if self.project_root is not None:
            for f in frames:
                if self._in_project(f.filename):
                    project_frames.append([f.filename, f.lineno, f.name])
        try:
            tb = "".join(traceback.format_list(kept))
        except BaseException:
            tb = ""
        message = ldb_harness._safe_str(exc)
        argname = getattr(exc, "argname", None)
        if type(exc).__name__ == "FixtureLookupError" and isinstance(argname, str):
            message = "fixture %r not found" % argname
        return {
            "kind": type(exc).__name__,
            "message": message,
            "program_line": program_line,
            "test_line": test_line,
            "traceback": tb + type(exc).__name__ + ": " + message + "\n",
            "test_location": test_location,
            "project_frames": project_frames,
        }

    def _describe(self, item):
        function = getattr(item, "function", None)
        source = None
        argnames = []
        if function is not None:
            try:
                source = textwrap.dedent(inspect.getsource(function))
            except BaseException:
                source = None
            try:
                argnames = [p for p in inspect.signature(function).parameters if p != "self"]
            except BaseException:
                argnames = []
        callspec = getattr(item, "callspec", None)
        params = []
        if callspec is not None:
            for name, value in callspec.params.items():
                params.append((name, _ldb.render(value, self.chars)))
        named = {p[0] for p in params}
        mark = None
        if item.get_closest_marker("skip") is not None:
            mark = "skip"
        elif item.get_closest_marker("xfail") is not None:
            mark = "xfail"
        location = getattr(item, "location", None) or (item.nodeid, 0, item.name)
        return {
            "nodeid": item.nodeid,
            "path": location[0],
            "line": int(location[1] or 0) + 1,
            "function": getattr(item, "originalname", None) or item.name,
            "source": source,
            "params": params,
            "fixtures": [a for a in argnames if a not in named],
            "mark": mark,
        }


class SwapError(Exception):
    """A candidate that cannot be put in place of the function in this session."""


def _raw_functions(code):
    """Every function object whose code is `code` (the function itself, wherever the module,
    a class or a decorator's closure holds it)."""
    import gc
    import types
    return [f for f in gc.get_referrers(code)
            if isinstance(f, types.FunctionType) and f.__code__ is code]


def _entry_code(module_file, leaf, lines):
    """The code object of the function under test: defined in `module_file`, named `leaf`,
    starting within `lines` (its first decorator's line to its last line)."""
    import gc
    import types
    found = None
    for obj in gc.get_objects():
        if isinstance(obj, types.FunctionType):
            code = obj.__code__
            if code.co_filename == module_file and code.co_name == leaf and \
                    lines[0] <= code.co_firstlineno <= lines[1]:
                found = code
                break
    return found


def _parse_def(source, leaf):
    """The tree of a candidate's `def` and its function node (None when it has none). A
    method's def comes indented as written (dedenting it would change its multi-line strings),
    so it is parsed as the body of an `if`."""
    import ast
    indented = source[:1] in (" ", "\t")
    tree = ast.parse("if True:\n" + source if indented else source)
    body = tree.body[0].body if indented else tree.body
    fn = next((n for n in body
               if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == leaf), None)
    return tree, fn


def _compile_def(source, first_line, leaf, module_file, needs_class_cell):
    """A function made from one candidate's `def` (no decorators), its lines numbered as in
    the candidate program."""
    import ast
    tree, fn = _parse_def(source, leaf)
    if fn is None:
        raise SwapError("the candidate defines no %s" % leaf)
    fn.decorator_list = []
    ast.increment_lineno(tree, first_line - fn.lineno)
    if needs_class_cell:
        # Zero-argument super() needs the __class__ cell a class body gives its methods.
        holder = ast.ClassDef(name="_ldb_swap", bases=[], keywords=[], body=[fn],
                              decorator_list=[])
        module = ast.Module(body=[holder], type_ignores=[])
    else:
        module = ast.Module(body=[fn], type_ignores=[])
    ast.fix_missing_locations(module)
    code = compile(module, module_file, "exec")
    for const in code.co_consts:
        if needs_class_cell and getattr(const, "co_name", None) == "_ldb_swap":
            for inner in const.co_consts:
                if getattr(inner, "co_name", None) == leaf:
                    return inner
        if getattr(const, "co_name", None) == leaf:
            return const
    raise SwapError("the candidate's %s did not compile to a function" % leaf)


class Batch:
    """A plugin that runs many candidates of one function in one session: collection (the
    project's and the tests' imports) happens once; each candidate then runs in a forked
    child, with its code put in place of the function's (every function object holding the
    original code gets the candidate's code and defaults), and its nodes run there. The
    parent never runs a candidate's code. A candidate that cannot be swapped in (a closure of
    another shape) gets an error, and the caller runs it the ordinary way."""

    def __init__(self, reporter, spec, module_file):
        self.reporter = reporter
        self.spec = spec
        self.module_file = module_file
        self.results = []
        self.error = None

    @pytest.hookimpl(tryfirst=True) if pytest else (lambda f: f)
    def pytest_runtestloop(self, session):
        if session.testsfailed and not session.config.option.continue_on_collection_errors:
            return None
        items = list(session.items)
        entry = self.spec["entry"]
        leaf = entry.rsplit(".", 1)[-1]
        lines = tuple(self.spec["lines"])
        code = _entry_code(self.module_file, leaf, lines)
        if code is None:
            self.error = "the function under test was not loaded by the tests' collection"
            return True
        originals = _raw_functions(code)
        needs_class_cell = "__class__" in code.co_freevars
        for cand in self.spec["candidates"]:
            self.results.append(self._one(session, items, cand, code, originals,
                                          needs_class_cell, leaf))
        return True

    def _one(self, session, items, cand, code, originals, needs_class_cell, leaf):
        try:
            new = _compile_def(cand["def"], cand["line"], leaf, self.module_file,
                               needs_class_cell)
        except SyntaxError as exc:
            return {"error": "does not compile: %s" % exc}
        except SwapError as exc:
            return {"error": str(exc)}
        if new.co_freevars != code.co_freevars:
            return {"error": "its free variables differ from the function's"}
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            try:
                self._child(session, items, cand, new, originals, write)
            finally:
                os._exit(0)
        os.close(write)
        deadline = time.monotonic() + self.spec.get("candidate_ms", 10000) / 1000.0
        chunks = []
        import select
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            ready, _, _ = select.select([read], [], [], left)
            if not ready:
                continue
            data = os.read(read, 1 << 16)
            if not data:
                break
            chunks.append(data)
        timed_out = time.monotonic() >= deadline
        if timed_out:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        os.close(read)
        try:
            os.waitpid(pid, 0)
        except OSError:
            pass
        if timed_out:
            return {"error": "timeout"}
        try:
            import json
            return {"nodes": json.loads(b"".join(chunks).decode("utf-8"))}
        except BaseException:
            return {"error": "the candidate's run ended without a report"}

    def _child(self, session, items, cand, new, originals, write):
        import json
        try:
            signal.signal(signal.SIGALRM, _on_alarm)
            module = None
            for m in list(sys.modules.values()):
                if getattr(m, "__file__", None) == self.module_file:
                    module = m
                    break
            prelude = cand.get("prelude") or ""
            if prelude and module is not None:
                exec(compile(prelude, self.module_file, "exec"), module.__dict__)
            defaults = None
            kwdefaults = None
            if originals:
                # Defaults are evaluated where the def runs: in the module's globals.
                import types
                probe = types.FunctionType(new, originals[0].__globals__, new.co_name,
                                           None, originals[0].__closure__)
                fresh = _defaults_of(cand, originals[0].__globals__, new.co_name)
                defaults, kwdefaults = fresh if fresh is not None else (
                    probe.__defaults__, probe.__kwdefaults__)
            for f in originals:
                f.__code__ = new
                f.__defaults__ = defaults
                f.__kwdefaults__ = kwdefaults
            rep = self.reporter
            rep.nodes = {}
            rep.first_left = set(rep.first)
            rep.first_failed = False
            session.shouldstop = False
            session.shouldfail = False
            for i, item in enumerate(items):
                nextitem = items[i + 1] if i + 1 < len(items) else None
                item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
                if session.shouldstop or session.shouldfail:
                    break
            payload = json.dumps(list(rep.nodes.values())).encode("utf-8")
        except BaseException as exc:
            payload = json.dumps({"error": "%s: %s" % (
                type(exc).__name__, ldb_harness._safe_str(exc))}).encode("utf-8")
        view = memoryview(payload)
        while view:
            n = os.write(write, view)
            view = view[n:]
        os.close(write)


def _defaults_of(cand, globals_, name):
    """The candidate's default values, evaluated in the module's globals (None when it has no
    defaults to evaluate or they cannot be)."""
    import ast
    try:
        _, fn = _parse_def(cand["def"], name)
        fn.decorator_list = []
        fn.body = [ast.Pass()]
        fn.returns = None
        for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs:
            a.annotation = None
        for a in (fn.args.vararg, fn.args.kwarg):
            if a is not None:
                a.annotation = None
        module = ast.Module(body=[fn], type_ignores=[])
        ast.fix_missing_locations(module)
        scope = {}
        exec(compile(module, "<defaults>", "exec"), globals_, scope)
        made = scope[name]
        return made.__defaults__, made.__kwdefaults__
    except BaseException:
        return None


def warm_up():
    """One empty session, in a warm worker before it forks: what pytest compiles, imports and
    caches on first use (regular expressions, lazily imported modules, the distributions on the
    path) is then there in every run. Third-party plugins are not loaded for it, and nothing is
    collected: no project code runs here."""
    if pytest is None:
        return
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    try:
        pytest.main(
            ["-p", "no:cacheprovider", "-q", "-c", os.devnull, "--rootdir", "/", os.devnull],
            plugins=[Reporter(None, 100, 0, False, True)],
        )
    except BaseException:
        pass
    finally:
        del os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"]
        ldb_harness.flush_streams()


def run(req):
    """One pytest session; the harness's result with a `pytest` report."""
    test = req["test"]
    project = req.get("project") or {}
    result = ldb_harness._result("passed")
    report = {
        "version": None,
        "location": None,
        "import_error": IMPORT_ERROR,
        "exit_code": None,
        "rootdir": None,
        "inifile": None,
        "usage_error": None,
        "collect_errors": [],
        "items": [],
        "nodes": [],
        "module_imported": None,
        "session_ms": None,
        "session_cpu_ms": None,
    }
    result["pytest"] = report
    if pytest is None:
        result["status"] = "error"
        return result
    # pytest imports `random`, so a warm worker's runs would share its state: a run of its own.
    if "random" in sys.modules:
        sys.modules["random"].seed()
    report["version"] = getattr(pytest, "__version__", None)
    report["location"] = os.path.dirname(os.path.dirname(os.path.abspath(pytest.__file__)))
    collect_only = bool(test.get("collect_only"))
    reporter = Reporter(
        project.get("module_file"),
        req["value_chars"],
        test.get("node_timeout_ms", 0) / 1000.0,
        req.get("traced", False),
        collect_only,
        test.get("first") or (),
        test.get("cover"),
        bool(test.get("keep_going")),
    )
    traced_project = test.get("trace_project")
    if traced_project:
        reporter.project_root = os.path.realpath(traced_project["root"])
        reporter.project_skip = tuple(os.path.realpath(p) for p in traced_project.get("skip", ()))
    # Native tracebacks: pytest's own rendering of a failure is text nobody reads here.
    args = ["-p", "no:cacheprovider", "-q", "--tb=native"]
    if collect_only:
        args.append("--collect-only")
    args.extend(test["args"])
    cwd = project.get("cwd")
    if cwd:
        os.chdir(cwd)
        # As `python -m pytest` runs: the directory it starts in is on the import path.
        if cwd not in sys.path:
            sys.path.insert(0, cwd)
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    code = None
    started = time.perf_counter()
    started_cpu = time.process_time()
    plugins = [reporter]
    batch = None
    if test.get("batch"):
        batch = Batch(reporter, test["batch"], project.get("module_file"))
        plugins.append(batch)
    try:
        code = pytest.main(args, plugins=plugins)
    except SystemExit as exc:
        result = dict(result, **ldb_harness._result("exited", "test", exit_code=ldb_harness._exit_code(exc)))
        result["pytest"] = report
    except BaseException as exc:
        result = dict(result, **ldb_harness._result("error", "test", exc))
        result["pytest"] = report
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        report["session_ms"] = (time.perf_counter() - started) * 1000.0
        report["session_cpu_ms"] = (time.process_time() - started_cpu) * 1000.0
    try:
        report["exit_code"] = int(code) if code is not None else None
    except BaseException:
        report["exit_code"] = None
    report["rootdir"] = reporter.rootdir
    report["inifile"] = reporter.inifile
    report["usage_error"] = reporter.usage_error
    report["collect_errors"] = reporter.collect_errors
    report["items"] = reporter.items
    report["nodes"] = list(reporter.nodes.values())
    report["module_imported"] = reporter.module_imported
    if batch is not None:
        report["batch"] = batch.results
        report["batch_error"] = batch.error
    ldb_harness.flush_streams()
    return result
