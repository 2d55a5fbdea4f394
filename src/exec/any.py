_ldb_frame = __import__('sys')._getframe
_ldb_isinstance, _ldb_exit, _ldb_open = isinstance, __import__('sys').exit, open
def _ldb_at(f, _seen={}):
    # The variant's answer the first time a place in the code asks, the other one after: both
    # branches over the variants, and a loop waiting on a stand-in ends. With a seed, the first
    # answer is a coin per place, so places answer differently from one another; the coin goes
    # by the order in which places first ask, which the same run of an instrumented copy of the
    # snippet (other offsets, other line numbers) shares.
    k = (id(f.f_code), f.f_lasti)
    if k in _seen: return not _seen[k]
    _seen[k] = first = TRUTH if not SEED else hash((len(_seen), SEED)) >> 4 & 1 == 1
    return first
def _ldb_ask(s, *o): return _ldb_at(_ldb_frame(1))
def _ldb_iter(items, _op=__import__('opcode').opmap):
    # Unpacking (`a, b = x`) gets as many stand-ins as it asks for.
    try:
        f = _ldb_frame(2)
        op, n = f.f_code.co_code[f.f_lasti], f.f_code.co_code[f.f_lasti + 1]
        if op == _op['UNPACK_SEQUENCE']: return iter([_LdbAny() for _ in range(n)])
        if op == _op['UNPACK_EX']: return iter([_LdbAny() for _ in range((n & 255) + (n >> 8))])
    except Exception: pass
    return iter(items)
def _ldb_lookup(f, name, missing=None):
    # What `name` means in frame `f`: local, global, then builtin.
    b = f.f_builtins if _ldb_isinstance(f.f_builtins, dict) else vars(f.f_builtins)
    return f.f_locals.get(name, f.f_globals.get(name, b.get(name, missing)))
def _ldb_raise(f, _seen=set(), _dis=__import__('dis')):
    # A call inside `try` raises what the innermost handler catches (any exception for a bare
    # `except`), the first time at a place, so the `except` body runs. Python 3.11's bytecode:
    # a handler starts with PUSH_EXC_INFO, then loads the class CHECK_EXC_MATCH tests.
    k = (id(f.f_code), f.f_lasti)
    if k in _seen: return
    _seen.add(k)
    try:
        for e in _dis._parse_exception_table(f.f_code):
            if e.start <= f.f_lasti < e.end: break
        else: return
        ins = [i for i in _dis.get_instructions(f.f_code) if i.offset >= e.target][:12]
        if len(ins) < 2 or ins[0].opname != 'PUSH_EXC_INFO': return
        if ins[1].opname == 'POP_TOP': t = Exception
        else:
            path = []
            for i in ins[1:]:
                if i.opname == 'CHECK_EXC_MATCH': break
                if i.opname in ('LOAD_NAME', 'LOAD_GLOBAL', 'LOAD_FAST', 'LOAD_DEREF') and not path: path.append(i.argval)
                elif i.opname == 'LOAD_ATTR' and len(path) == 1: path.append(i.argval)
            else: return
            t = _ldb_lookup(f, path[0])
            for a in path[1:]: t = getattr(t, a)
    except Exception: return
    if _ldb_isinstance(t, type) and issubclass(t, BaseException): raise t.__new__(t)
_ldb_results = {}
def _ldb_result(f, _seen=set(), _next={}, _dis=__import__('dis')):
    # A call whose result goes straight into a name the snippet tests with `is None` or `is`
    # (`handler = self.find(e)`, then `if handler is None:`; `ctx = stack.get()`, then `if
    # ctx is not self:`) gives None or the other name's value, the first time at a place: read
    # from the caller's next instruction. `_ldb_results` maps each such name to the other one
    # (None for None).
    k = (id(f.f_code), f.f_lasti)
    if not _ldb_results or k in _seen: return False, None
    try:
        after = _next.get(f.f_code)
        if after is None:
            ins = list(_dis.get_instructions(f.f_code))
            after = _next[f.f_code] = {a.offset: b for a, b in zip(ins, ins[1:])}
        n = after.get(f.f_lasti)
        if n is None or not n.opname.startswith('STORE_') or n.argval not in _ldb_results: return False, None
        other = _ldb_results[n.argval]
        value = None
        if other is not None:
            value = _ldb_lookup(f, other, _ldb_results)
            if value is _ldb_results: return False, None
    except Exception: return False, None
    _seen.add(k)
    return True, value
class _LdbAnyType(type):
    def __getattr__(c, a):
        if a[:2] == '__': raise AttributeError(a)
        return _LdbAny()
    def __iter__(c): return _ldb_iter(ITEMS)
    def __getitem__(c, k): return _LdbAny()
    __contains__ = _ldb_ask
    def __len__(c): return len(ITEMS)
    __lt__ = __le__ = __gt__ = __ge__ = _ldb_ask
    def __instancecheck__(c, x): return type.__instancecheck__(c, x) or _ldb_at(_ldb_frame(1))
    def __subclasscheck__(c, x): return type.__subclasscheck__(c, x) or _ldb_at(_ldb_frame(1))
    # Making an instance is a call too (`executor = Pool()` inside `try`).
    def __call__(c, *a, **k):
        if RAISES: _ldb_raise(_ldb_frame(1))
        return type.__call__(c, *a, **k)
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __mod__ = __rmod__ = __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __or__ = __ror__ = __and__ = __rand__ = lambda c, *o: _LdbAny()
class _LdbAny(metaclass=_LdbAnyType):
    def __init__(s, *a, **k): pass
    def __getattr__(s, a):
        if a[:2] == '__': raise AttributeError(a)
        return _LdbAny()
    def __call__(s, *a, **k):
        if RAISES: _ldb_raise(_ldb_frame(1))
        if NONE and _ldb_results:
            given, value = _ldb_result(_ldb_frame(1))
            if given: return value
        return _LdbAny()
    def __getitem__(s, k): return _LdbAny()
    def __setitem__(s, k, v): pass
    def __delitem__(s, k): pass
    def __iter__(s): return _ldb_iter(ITEMS)
    def __len__(s): return len(ITEMS)
    def __enter__(s): return s
    def __exit__(s, *e): return False
    def __str__(s): return 'any'
    def __format__(s, spec): return 'any'
    def __fspath__(s): return 'any'
    def __int__(s): return len(ITEMS)
    def __index__(s): return len(ITEMS)
    def __float__(s): return float(len(ITEMS))
    def __mro_entries__(s, b): return (_LdbAny,)
    # An instance in isinstance's second place (`isinstance(b, unicode)`) acts as a class.
    __bool__ = __contains__ = __lt__ = __le__ = __gt__ = __ge__ = __instancecheck__ = __subclasscheck__ = _ldb_ask
    __eq__ = EQUAL
    __hash__ = object.__hash__
    __sub__ = __rsub__ = __mul__ = __rmul__ = __mod__ = __rmod__ = __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __pow__ = __rpow__ = __matmul__ = __lshift__ = __rshift__ = __xor__ = __rxor__ = __or__ = __ror__ = __and__ = __rand__ = __neg__ = __pos__ = __abs__ = __invert__ = __round__ = lambda s, *o: s
    __divmod__ = __rdivmod__ = lambda s, o: (s, s)
    # Joined to a string it gives a string (`'_handle_' + kind` names an attribute).
    __add__ = lambda s, o: 'any' + o if _ldb_isinstance(o, str) else s
    __radd__ = lambda s, o: o + 'any' if _ldb_isinstance(o, str) else s
def _ldb_module(n):
    # A standard module's name is that module, with its real values (`sys.version_info`).
    if n in __import__('sys').stdlib_module_names:
        try: return __import__(n)
        except Exception: pass
    return _LdbAny()
# A stand-in is whatever built-in type `isinstance` asks about, as the variant answers.
def isinstance(o, c):
    return _ldb_isinstance(o, c) or (_LdbAny in type(o).__mro__ and _ldb_at(_ldb_frame(1)))
# A body cut out of its function ends each path with `exit(x)` (Treefix's extraction turns
# `return x` into it): the first time at a place it returns, so the lines after it run.
def exit(*a, _seen=set()):
    f = _ldb_frame(1)
    k = (id(f.f_code), f.f_lasti)
    if k in _seen: _ldb_exit(*a)
    _seen.add(k)
quit = exit
# A file the snippet reads but that is not there is made (content by its extension), so is
# the folder of one it writes, and Python 2's unbuffered text files (`open(f, 'a', 0)`) are
# buffered.
def open(file, mode='r', buffering=-1, encoding=None, *a, **k):
    if buffering == 0 and 'b' not in mode: buffering = -1
    try: return _ldb_open(file, mode, buffering, encoding, *a, **k)
    except FileNotFoundError:
        try:
            os = __import__('os')
            path = os.fspath(file)
            os.makedirs(os.path.dirname(path) or '.', exist_ok=True)
            if not any(m in mode for m in 'wax'):
                ext = os.path.splitext(path)[1].lower()
                text = {'.json': '{}', '.csv': 'a,b\n1,2\n'}.get(ext, 'any\n')
                with _ldb_open(path, 'w', encoding=encoding) as f: f.write(text)
        except Exception: pass
        return _ldb_open(file, mode, buffering, encoding, *a, **k)
# A folder the snippet lists (`os.listdir`, `os.scandir`, `os.walk`) but that is not there is
# made, with a file in it, and one for each file suffix the snippet names (`_ldb_suffixes`).
_ldb_suffixes = ()
def _ldb_folders(os=__import__('os')):
    def made(p):
        try:
            path = os.fspath(p)
            if path and not os.path.exists(path):
                os.makedirs(path)
                for s in ('.txt',) + tuple(_ldb_suffixes):
                    with _ldb_open(os.path.join(path, 'any' + s), 'w') as f: f.write('any\n')
        except Exception: pass
    for name in ('listdir', 'scandir', 'walk'):
        def listing(*a, _real=getattr(os, name), **k):
            made(a[0] if a else k.get('path', k.get('top', '.')))
            return _real(*a, **k)
        setattr(os, name, listing)
_ldb_folders()
# A relative import (`from .helpers import f`) names a module of the snippet's own project,
# which nothing installs: the snippet runs in a stand-in package whose modules give stand-ins.
class _LdbProject(type(__import__('sys'))):
    def __getattr__(m, a):
        if a[:2] == '__': raise AttributeError(a)
        return _LdbAny()
class _LdbProjectFinder:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.split('.')[0] != '_ldb_project': return None
        return __import__('importlib.machinery').machinery.ModuleSpec(name, _LdbProjectFinder, is_package=True)
    @staticmethod
    def create_module(spec):
        m = _LdbProject(spec.name)
        m.__path__ = []
        return m
    @staticmethod
    def exec_module(m): pass
__import__('sys').meta_path.append(_LdbProjectFinder)
__package__ = '_ldb_project.package'
