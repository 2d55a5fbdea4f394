"""A scored run in two processes: the program's process only computes, the checker compares.

The program runs in a process of its own (`serve`), started fresh (exec) so nothing of the test
is in its memory. The checker (`check`) runs the test: every name the program defines is a
stand-in there, and calling one sends the arguments to the program's process, which calls the
real function and sends back the value. Values cross as tagged JSON of built-in types only
(numbers, strings, bytes, lists, tuples, sets, dicts, ...); anything else arrives as an opaque
value that equals only itself. So the test's comparisons, `assert` and expected values all live
in a process that never ran program code, and the program sees no expected value the test does
not hand it: patching `__eq__`, builtins, the harness's frames or the result pipe changes
nothing the checker uses.

What the test hands the program needs to arrive as itself, or a right program fails: an object
the program built (a tree of its own `Node`s) is held in the program's process and crosses as a
handle, which the checker may pass back, read or set attributes of, and call (attributes cross
as values: a list read from an object is a copy, and no truth, length or `==` is asked of the
program's object); a built-in type or function, or a standard module's, crosses to the program
by name; a function of the test's (a `key=` lambda) stays in the checker and the program calls
it back, and an assert failing in it fails the test. From the program only data, public
built-in types and handles are taken: nothing it sends becomes program code in the checker.
"""
import builtins
import json
import os
import sys

import ldb_harness as H

MAX_FRAME = 64 << 20
# Elements encoded per value at most: an endless generator or a huge structure stops here.
MAX_ITEMS = 2_000_000
# Characters of an opaque value's repr that are kept.
OPAQUE_CHARS = 200


# --- frames: 4-byte big-endian length, then JSON -------------------------------------------

def _send(fd, obj):
    data = json.dumps(obj, separators=(",", ":")).encode("utf-8", "surrogatepass")
    data = len(data).to_bytes(4, "big") + data
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _read_exactly(fd, n):
    parts = []
    while n > 0:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            return None
        parts.append(chunk)
        n -= len(chunk)
    return b"".join(parts)


def _recv(fd):
    """The next frame, or None at the end of the stream (the other side is gone)."""
    head = _read_exactly(fd, 4)
    if head is None:
        return None
    size = int.from_bytes(head, "big")
    if size > MAX_FRAME:
        raise ValueError("a frame of %d bytes is over the limit" % size)
    body = _read_exactly(fd, size)
    if body is None:
        return None
    return json.loads(body.decode("utf-8", "surrogatepass"))


# --- values -----------------------------------------------------------------------------

class _TooBig(Exception):
    pass


# Which side of the channel this process is, and what crosses it by reference. Set by `serve`
# (the program's process) and `check` (the checker); each side's process runs one test.
_STATE = {}


def _reset(side, **more):
    _STATE.clear()
    _STATE.update(side=side, held=[], held_ids={}, callbacks=[], callback_ids={}, opaques={},
                  stand_ins={})
    _STATE.update(more)


def _side():
    return _STATE.get("side")


class Opaque:
    """A value that is not of a built-in type: it reaches the test as itself only. One with a
    handle is an object held in the program's process: the test may pass it back, read and set
    its attributes and call it, each a request to that process."""
    # Named apart from any attribute a program's object is likely to have: those are read
    # from the object itself.
    __slots__ = ("_ldb_kind", "_ldb_repr", "_ldb_handle")

    def __init__(self, type_name, text, handle=None):
        object.__setattr__(self, "_ldb_kind", type_name)
        object.__setattr__(self, "_ldb_repr", text)
        object.__setattr__(self, "_ldb_handle", handle)

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return self is not other

    __hash__ = object.__hash__

    def __bool__(self):
        raise TypeError("a %s value from the program has no truth value here: only values of "
                        "built-in types reach the test" % self._ldb_kind)

    def __repr__(self):
        return "<%s: %s>" % (self._ldb_kind, self._ldb_repr)

    def _remote(self):
        link = _STATE.get("link")
        if self._ldb_handle is None or link is None:
            raise TypeError("a %s value from the program cannot be used here" % self._ldb_kind)
        return link

    def __getattr__(self, name):
        # Dunders are Python's own probes (copy, pickle, rendering): answered here, as absent.
        # (Truth, length and the rest are not forwarded either: `assert not f()` must not be
        # decided by the program's `__bool__`.)
        if name.startswith("__") or name in Opaque.__slots__ or self._ldb_handle is None:
            raise AttributeError(name)
        return self._remote().value_of({"getattr": self._ldb_handle, "name": name})

    def __setattr__(self, name, value):
        if name in Opaque.__slots__ or name.startswith("__"):
            raise AttributeError("%s is read-only here" % name)
        self._remote().value_of({
            "setattr": self._ldb_handle, "name": name, "value": encode(value),
        })

    def __call__(self, *args, **kwargs):
        message = _call_message("callh", self._ldb_handle, args, kwargs)
        return self._remote().value_of(message, args)


def _call_message(kind, target, args, kwargs):
    """A call across the channel: `call` (a program's name), `callh` (a held object) or
    `callback` (a function of the test's), with its arguments encoded."""
    return {
        kind: target,
        "args": [encode(a) for a in args],
        "kwargs": [[str(k), encode(v)] for k, v in kwargs.items()],
    }


def _opaque(v):
    try:
        name = type(v).__qualname__
    except BaseException:
        name = "?"
    try:
        text = repr(v)
    except BaseException:
        text = "repr() raised"
    if type(name) is not str:
        name = "?"
    if type(text) is not str:
        text = "?"
    out = {"o": name[:100], "repr": text[:OPAQUE_CHARS]}
    if _side() == "program":
        # Held here, so the checker can hand it back: the same object keeps its handle.
        held, ids = _STATE["held"], _STATE["held_ids"]
        handle = ids.get(id(v))
        if handle is None:
            handle = ids[id(v)] = len(held)
            held.append(v)
        out["h"] = handle
    return out


def _by_name(v):
    """A built-in type or function, or a standard module's function or class, by name: what a
    test hands the program (`int`, `len`, `math.sqrt`, `operator.itemgetter(1)` is not one)."""
    name = getattr(v, "__name__", None)
    if type(name) is str and getattr(builtins, name, None) is v:
        return {"bi": name}
    module = getattr(v, "__module__", None)
    qualname = getattr(v, "__qualname__", None)
    if type(module) is str and type(qualname) is str and \
            module.split(".")[0] in getattr(sys, "stdlib_module_names", ()):
        if _resolve(module, qualname) is v:
            return {"std": [module, qualname]}
    return None


def _resolve(module, qualname):
    try:
        import importlib
        obj = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
        return obj
    except BaseException:
        return None


def _callback_ref(fn):
    """A function of the test's, kept in the checker: the program calls it back by number."""
    fns, ids = _STATE["callbacks"], _STATE["callback_ids"]
    ref = ids.get(id(fn))
    if ref is None:
        ref = ids[id(fn)] = len(fns)
        fns.append(fn)
    return {"cb": ref}


def encode(v, budget=None):
    """`v` as tagged JSON; values of other types become opaque."""
    if budget is None:
        budget = [MAX_ITEMS]
    try:
        return _encode(v, budget)
    except _TooBig:
        return {"o": "too large", "repr": "a value of more than %d elements" % MAX_ITEMS}
    except RecursionError:
        return {"o": "too deep", "repr": "a value nested too deeply"}
    except ValueError:
        # An integer past the text conversion limit.
        return {"o": "too large", "repr": "a number too large to convert"}


def _encode(v, budget):
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooBig()
    if v is None or v is True or v is False:
        return v
    t = type(v)
    if t is str or t is float:
        return v
    if t is int:
        # JSON numbers of any size; the text conversion limit applies to huge ones.
        return v if -(1 << 63) < v < (1 << 63) else {"i": str(v)}
    if isinstance(v, bool):
        return bool(v)
    if isinstance(v, int):
        return _encode(int(v), budget)
    if isinstance(v, float):
        return float(v)
    if isinstance(v, str):
        return str(v)
    if isinstance(v, list):
        return {"l": [_encode(x, budget) for x in v]}
    if isinstance(v, tuple):
        return {"t": [_encode(x, budget) for x in v]}
    if isinstance(v, dict):
        return {"d": [[_encode(k, budget), _encode(x, budget)] for k, x in v.items()]}
    if isinstance(v, frozenset):
        return {"fs": [_encode(x, budget) for x in v]}
    if isinstance(v, set):
        return {"s": [_encode(x, budget) for x in v]}
    if isinstance(v, bytes):
        return {"b": bytes(v).hex()}
    if isinstance(v, bytearray):
        return {"ba": bytes(v).hex()}
    if isinstance(v, complex):
        return {"c": [v.real, v.imag]}
    if isinstance(v, range):
        return {"r": [v.start, v.stop, v.step]}
    module = getattr(t, "__module__", None)
    if module == "fractions" and t.__name__ == "Fraction":
        return {"fr": [str(v.numerator), str(v.denominator)]}
    if module == "decimal" and t.__name__ == "Decimal":
        return {"dec": str(v)}
    if hasattr(t, "__next__") and hasattr(t, "__iter__"):
        # A generator or iterator: what it yields, up to the element budget.
        items = []
        for x in v:
            items.append(_encode(x, budget))
        return {"it": items}
    if t is Opaque:
        if v._ldb_handle is not None:
            return {"h": v._ldb_handle}
        return {"o": v._ldb_kind, "repr": v._ldb_repr}
    if _side() == "checker":
        stand_in = _STATE["stand_ins"].get(id(v))
        if stand_in is not None and stand_in[0] is v:
            return {"g": stand_in[1]}
        named = _by_name(v)
        if named is not None:
            return named
        if callable(v):
            return _callback_ref(v)
    elif isinstance(v, type) and getattr(builtins, v.__name__, None) is v:
        return {"bi": v.__name__}
    return _opaque(v)


def decode(x):
    """A value from its tagged JSON; anything malformed raises ValueError."""
    if x is None or x is True or x is False:
        return x
    t = type(x)
    if t is int or t is float or t is str:
        return x
    if t is not dict or not x:
        raise ValueError("not a tagged value")
    if "o" in x:
        handle = x.get("h")
        if _side() != "checker" or type(handle) is not int:
            return Opaque(str(x.get("o")), str(x.get("repr", "")))
        # The same held object is the same value here (`is` holds).
        cache = _STATE["opaques"]
        if handle not in cache:
            cache[handle] = Opaque(str(x.get("o"))[:100], str(x.get("repr", ""))[:OPAQUE_CHARS],
                                   handle)
        return cache[handle]
    if len(x) != 1:
        raise ValueError("not a tagged value")
    (tag, body), = x.items()
    if tag == "i":
        return int(body)
    if tag == "bi":
        value = getattr(builtins, body, None) if type(body) is str else None
        # From the program only a public built-in type: nothing it names runs as code here.
        if value is None or (_side() == "checker" and (
                body.startswith("_") or not isinstance(value, type))):
            raise ValueError("not a built-in name")
        return value
    if tag in ("h", "std", "cb", "g"):
        if _side() != "program":
            raise ValueError("a reference only the program's process resolves")
        return _resolve_reference(tag, body)
    if tag == "dec":
        import decimal
        return decimal.Decimal(str(body))
    if tag == "fr":
        import fractions
        return fractions.Fraction(int(body[0]), int(body[1]))
    if tag == "b":
        return bytes.fromhex(body)
    if tag == "ba":
        return bytearray.fromhex(body)
    if type(body) is not list:
        raise ValueError("not a tagged value")
    if tag == "l":
        return [decode(i) for i in body]
    if tag == "t":
        return tuple(decode(i) for i in body)
    if tag == "s":
        return _same_order(set, [decode(i) for i in body])
    if tag == "fs":
        return _same_order(frozenset, [decode(i) for i in body])
    if tag == "d":
        return {decode(k): decode(v) for k, v in body}
    if tag == "c":
        return complex(float(body[0]), float(body[1]))
    if tag == "r":
        return range(int(body[0]), int(body[1]), int(body[2]))
    if tag == "it":
        return iter([decode(i) for i in body])
    raise ValueError("unknown tag %r" % tag)


def _same_order(kind, items):
    """A set of `items` that iterates in their order, when one of a few ways of building it
    does: a set's order depends on how it was built, and a program that returns `tuple(s)`
    must see the order the test's set had."""
    first = kind(items)
    if len(items) > 10000 or list(first) == items:
        return first
    ways = [lambda: kind(frozenset(items)), lambda: kind(set(frozenset(items)))]
    try:
        ordered = sorted(items)
        ways += [lambda: kind(frozenset(ordered)), lambda: kind(set(frozenset(ordered)))]
    except TypeError:
        pass
    for way in ways:
        candidate = way()
        if list(candidate) == items:
            return candidate
    return first


# --- the program's process ---------------------------------------------------------------

def _names(g):
    """What the checker may use of the program's globals: callables (called here), standard
    modules (imported there), and plain values."""
    out = {}
    for name, v in list(g.items()):
        if type(name) is not str or name.startswith("__"):
            continue
        try:
            if type(v).__name__ == "module":
                out[name] = {"module": str(getattr(v, "__name__", ""))}
            elif callable(v):
                out[name] = {"call": True}
            else:
                out[name] = {"value": encode(v, [10000])}
        except BaseException:
            continue
    return out


def _resolve_reference(tag, body):
    """In the program's process: a held object (`h`), a standard module's name (`std`), one of
    the program's functions (`g`), or a stand-in for a function of the test's that calls it
    back (`cb`)."""
    if tag == "h":
        held = _STATE["held"]
        if type(body) is not int or not 0 <= body < len(held):
            raise ValueError("no such handle")
        return held[body]
    if tag == "std":
        if type(body) is not list or len(body) != 2:
            raise ValueError("not a name")
        value = _resolve(str(body[0]), str(body[1]))
        if value is None:
            raise ValueError("no such name")
        return value
    if tag == "g":
        # One of the program's own functions, handed back by the test.
        if type(body) is not str or body not in _STATE["g"]:
            raise ValueError("no such name")
        return _STATE["g"][body]
    if type(body) is not int:
        raise ValueError("not a callback")

    def call_back(*args, **kwargs):
        reply = _program_request(_call_message("callback", body, args, kwargs))
        if "ok" in reply:
            return decode(reply["ok"])
        if "exit" in reply:
            raise SystemExit(reply["exit"])
        info = _clean_exception(reply.get("raise"))
        raise _rebuild(info, reply.get("builtin") is True)
    return call_back


def _answer(g, msg):
    """A request of the checker's: call a function by name or a held object, or get or set a
    held object's attribute."""
    try:
        if "getattr" in msg:
            return {"ok": encode(getattr(_resolve_reference("h", msg["getattr"]), msg["name"]))}
        if "setattr" in msg:
            target = _resolve_reference("h", msg["setattr"])
            setattr(target, msg["name"], decode(msg["value"]))
            return {"ok": None}
        fn = _resolve_reference("h", msg["callh"]) if "callh" in msg else g.get(msg["call"])
        args = [decode(a) for a in msg["args"]]
        kwargs = {k: decode(v) for k, v in msg["kwargs"]}
        value = fn(*args, **kwargs)
        # Encoding runs program code too (a generator that raises): its error is the call's.
        reply = {"ok": encode(value)}
        if any(type(a) in (list, dict, set, bytearray) for a in args):
            # In-place changes to the arguments travel back (a sort that mutates its list).
            reply["args"] = [encode(a) for a in args]
    except SystemExit as exc:
        return {"exit": H._exit_code(exc)}
    except BaseException as exc:
        return {"raise": H._exception(exc), "builtin": type(exc).__module__ == "builtins"}
    return reply


def _program_request(msg):
    """Sends a callback request and answers the checker's calls until its reply comes (the
    test's function may call the program's functions again)."""
    fd = _STATE["fd"]
    _send(fd, msg)
    while True:
        incoming = _recv(fd)
        if incoming is None:
            # The checker hung up: the test is over.
            os._exit(0)
        if "ok" in incoming or "raise" in incoming or "exit" in incoming:
            return incoming
        reply = _answer(_STATE["g"], incoming)
        H.flush_streams()
        _send(fd, reply)


def serve(req, fd):
    """Loads the program, says what it defines, then answers calls until the checker hangs up."""
    code, g, result = H.prepare(req)
    _reset("program", fd=fd, g=g)
    if result is None:
        try:
            exec(code, g)
        except SystemExit as exc:
            result = H._result("exited", "load", exit_code=H._exit_code(exc))
        except BaseException as exc:
            result = H._result("error", "load", exc)
    H.flush_streams()
    if result is not None:
        _send(fd, {"loaded": False, "result": result})
        return
    _send(fd, {"loaded": True, "names": _names(g)})
    while True:
        msg = _recv(fd)
        if msg is None:
            return
        reply = _answer(g, msg)
        H.flush_streams()
        _send(fd, reply)


# --- the checker ------------------------------------------------------------------------
# Everything below reads what the program's process sent as untrusted data.

class ProgramGone(Exception):
    """The program's process ended, or broke the channel, while the test needed it."""


class _TestEnded(BaseException):
    """A function of the test's, called back by the program, failed an assert or exited: the
    test ends with that, past any `except Exception` in the test."""

    def __init__(self, cause):
        BaseException.__init__(self)
        self.cause = cause


def _text(v, default=""):
    return v if type(v) is str else default


def _line(v):
    return v if type(v) is int and 0 < v < (1 << 31) else None


def _lines(v):
    if type(v) is not list:
        return []
    return [x for x in (_line(x) for x in v[-16:]) if x is not None]


def _clean_exception(info):
    if type(info) is not dict:
        return {"kind": "Exception", "message": "", "program_line": None, "test_line": None,
                "traceback": "", "prelude_line": None}
    return {
        "kind": _text(info.get("kind"), "Exception")[:200] or "Exception",
        "message": _text(info.get("message"))[:10000],
        "program_line": _line(info.get("program_line")),
        "program_callers": _lines(info.get("program_callers")),
        "test_line": None,
        "traceback": _text(info.get("traceback"))[:20000],
        "prelude_line": _line(info.get("prelude_line")),
    }


def _load_failure(result):
    """The program's report that it did not load, made safe: never a pass."""
    if type(result) is not dict:
        result = {}
    status = result.get("status")
    exit_code = result.get("exit_code")
    return {
        "status": status if status in ("error", "exited") else "error",
        "phase": result.get("phase") if result.get("phase") in ("prelude", "compile", "load")
        else "load",
        "exception": _clean_exception(result["exception"]) if result.get("exception") else None,
        "actual": None,
        "expected": None,
        "exit_code": exit_code if type(exit_code) is int and -(1 << 31) <= exit_code < (1 << 31)
        else None,
    }


class _Link:
    def __init__(self, fd, pid):
        self.fd = fd
        self.pid = pid

    def recv(self):
        try:
            msg = _recv(self.fd)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ProgramGone("the program's process sent something unreadable (%s)" % exc)
        if msg is None:
            raise ProgramGone(self._how_it_ended())
        if type(msg) is not dict:
            raise ProgramGone("the program's process sent something unreadable")
        return msg

    def _how_it_ended(self):
        import time
        for _ in range(50):
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                return "the program's process ended before the test finished"
            if pid:
                if os.WIFSIGNALED(status):
                    return ("the program's process was killed by signal %d before the test "
                            "finished" % os.WTERMSIG(status))
                return ("the program's process exited with code %d before the test finished"
                        % os.WEXITSTATUS(status))
            time.sleep(0.01)
        return "the program's process closed its channel before the test finished"

    def request(self, msg):
        """Sends a request, runs the program's callbacks of the test's functions while they
        come, and returns the reply."""
        _send(self.fd, msg)
        while True:
            reply = self.recv()
            if "callback" not in reply:
                return reply
            _send(self.fd, self._call_back(reply))

    def _call_back(self, msg):
        fns = _STATE["callbacks"]
        ref = msg.get("callback")
        try:
            if type(ref) is not int or not 0 <= ref < len(fns):
                raise ValueError("no such callback")
            args = [decode(a) for a in msg["args"]]
            kwargs = {str(k): decode(v) for k, v in msg["kwargs"]}
        except (ValueError, TypeError, KeyError, IndexError) as exc:
            raise ProgramGone("the program's process sent a malformed callback (%s)" % exc)
        try:
            return {"ok": encode(fns[ref](*args, **kwargs))}
        except Exception as exc:
            if isinstance(exc, (AssertionError, ProgramGone)):
                # The test's own assert failed: the test fails here, whatever the program
                # would do with the error (catch it, print its message).
                raise _TestEnded(exc)
            # Any other error reaches the program as its kind and message, as it would in
            # one process (a `key=int` that raises ValueError), without the test's traceback.
            info = {"kind": type(exc).__name__, "message": str(exc)[:1000]}
            return {"raise": info, "builtin": type(exc).__module__ == "builtins"}
        except BaseException as exc:
            raise _TestEnded(exc)

    def call(self, name, args, kwargs):
        return self.value_of(_call_message("call", name, args, kwargs), args)

    def value_of(self, msg, args=()):
        """The value a request returns, or what it raised, as the test sees it."""
        reply = self.request(msg)
        if "ok" in reply:
            try:
                value = decode(reply["ok"])
                changed = reply.get("args")
                if type(changed) is list and len(changed) == len(args):
                    for arg, new in zip(args, changed):
                        _update_in_place(arg, decode(new))
            except (ValueError, TypeError, KeyError, IndexError) as exc:
                raise ProgramGone("the program's process sent a malformed value (%s)" % exc)
            return value
        if "exit" in reply:
            code = reply["exit"]
            raise SystemExit(code if type(code) is int else 1)
        if "raise" in reply:
            info = _clean_exception(reply["raise"])
            exc = _rebuild(info, reply.get("builtin") is True)
            exc._ldb_remote = info
            raise exc
        raise ProgramGone("the program's process sent something unreadable")


def _update_in_place(arg, new):
    t = type(arg)
    if t is not type(new):
        return
    if t is list or t is bytearray:
        arg[:] = new
    elif t is dict or t is set:
        arg.clear()
        arg.update(new)


def _rebuild(info, builtin):
    """An exception of the program's class when it is a built-in one (so a test's `except
    ValueError` still catches it), else of a class with its name."""
    kind = info["kind"]
    cls = getattr(builtins, kind, None) if builtin and kind.isidentifier() else None
    if isinstance(cls, type) and issubclass(cls, Exception):
        try:
            return cls(info["message"])
        except BaseException:
            pass
    name = kind if kind.isidentifier() else "ProgramError"
    return type(name, (Exception,), {})(info["message"])


def _stand_in(link, name):
    def call(*args, **kwargs):
        return link.call(name, args, kwargs)
    call.__name__ = call.__qualname__ = name
    return call


def _globals(link, names, alias):
    g = {"__name__": "__ldb_test__", "__builtins__": builtins}
    stdlib = getattr(sys, "stdlib_module_names", ())
    if type(names) is not dict:
        names = {}
    for name, entry in names.items():
        if type(name) is not str or not name.isidentifier() or type(entry) is not dict:
            continue
        if entry.get("call") is True:
            g[name] = _stand_in(link, name)
            _STATE["stand_ins"][id(g[name])] = (g[name], name)
        elif "module" in entry:
            module = entry["module"]
            # Only standard modules: a module the program wrote into its folder stays there.
            if type(module) is str and module.split(".")[0] in stdlib:
                try:
                    import importlib
                    g[name] = importlib.import_module(module)
                except BaseException:
                    pass
        elif "value" in entry:
            try:
                g[name] = decode(entry["value"])
            except (ValueError, TypeError, KeyError, IndexError):
                pass
    if alias:
        import types
        module = types.ModuleType(alias)
        module.__dict__.update({k: v for k, v in g.items() if k != "__name__"})
        sys.modules[alias] = module
    return g


def check(req, fd, pid):
    """Runs the test against the program's process; the result dict of the harness."""
    link = _Link(fd, pid)
    _reset("checker", link=link)
    chars = req["value_chars"]
    phase = "load"
    try:
        hello = link.recv()
        if hello.get("loaded") is not True:
            return _load_failure(hello.get("result"))
        g = _globals(link, hello.get("names"), req.get("module"))
        phase = "test"
        return H._run_test(req["test"], g, chars)
    except _TestEnded as ended:
        exc = ended.cause
        if isinstance(exc, SystemExit):
            return H._result("exited", phase, exit_code=H._exit_code(exc))
        if isinstance(exc, AssertionError):
            return H._result("failed", phase, exc)
        return H._result("error", phase, exc)
    except ProgramGone as exc:
        return H._result("error", phase, exc)
    except SystemExit as exc:
        return H._result("exited", phase, exit_code=H._exit_code(exc))
    except AssertionError as exc:
        return H._result("failed" if phase == "test" else "error", phase, exc)
    except BaseException as exc:
        return H._result("error", phase, exc)
    finally:
        H.flush_streams()
