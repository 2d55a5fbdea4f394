class _LdbAnyType(type):
    def __getattr__(c, a):
        if a[:2] == '__': raise AttributeError(a)
        return _LdbAny()
    def __iter__(c): return iter(())
    def __getitem__(c, k): return _LdbAny()
    def __contains__(c, x): return False
    def __len__(c): return 0
class _LdbAny(metaclass=_LdbAnyType):
    def __init__(s, *a, **k): pass
    def __getattr__(s, a):
        if a[:2] == '__': raise AttributeError(a)
        return _LdbAny()
    def __call__(s, *a, **k): return _LdbAny()
    def __getitem__(s, k): return _LdbAny()
    def __setitem__(s, k, v): pass
    def __delitem__(s, k): pass
    def __iter__(s): return iter(ITEMS)
    def __len__(s): return 0
    def __bool__(s): return True
    def __enter__(s): return s
    def __exit__(s, *e): return False
    def __str__(s): return 'any'
    def __int__(s): return 0
    def __index__(s): return 0
    def __float__(s): return 0.0
    def __contains__(s, x): return False
    def __lt__(s, o): return False
    def __mro_entries__(s, b): return (_LdbAny,)
    __le__ = __gt__ = __ge__ = __lt__
    __hash__ = object.__hash__
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __mod__ = __rmod__ = __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __or__ = __ror__ = __and__ = __rand__ = __neg__ = lambda s, *o: s
