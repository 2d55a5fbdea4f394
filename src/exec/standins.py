# ldb exec --allow-missing: every module that cannot be imported gets a permissive stand-in.
import sys as _ldb_sys
import importlib.abc as _ldb_abc
import importlib.machinery as _ldb_machinery
class _LdbStandIn:
    """Answers every use with another stand-in, so code written against a missing module runs."""
    def __init__(self, name="stand-in"):
        object.__setattr__(self, "_ldb_name", name)
    def __getattr__(self, attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return _LdbStandIn(self._ldb_name + "." + attr)
    def __setattr__(self, attr, value):
        object.__setattr__(self, attr, value)
    def __call__(self, *args, **kwargs):
        return _LdbStandIn(self._ldb_name + "()")
    def __mro_entries__(self, bases):
        return (object,)
    def __iter__(self):
        return iter(())
    def __len__(self):
        return 0
    def __bool__(self):
        return True
    def __getitem__(self, key):
        return _LdbStandIn(self._ldb_name + "[]")
    def __setitem__(self, key, value):
        pass
    def __contains__(self, item):
        return False
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        return False
    def __repr__(self):
        return "<stand-in " + self._ldb_name + ">"
    def __str__(self):
        return self._ldb_name
    def __int__(self):
        return 0
    def __float__(self):
        return 0.0
    def __index__(self):
        return 0
    def __hash__(self):
        return id(self)
    def __eq__(self, other):
        return self is other
    def _ldb_same(self, *args):
        return self
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _ldb_same
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _ldb_same
    __pow__ = __rpow__ = __matmul__ = __rmatmul__ = __neg__ = __pos__ = __abs__ = _ldb_same
    __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = __invert__ = _ldb_same
    def __lt__(self, other):
        return False
    __le__ = __gt__ = __ge__ = __lt__
class _LdbStandInModule(type(_ldb_sys)):
    def __getattr__(self, attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return _LdbStandIn(self.__name__ + "." + attr)
class _LdbStandInFinder(_ldb_abc.MetaPathFinder, _ldb_abc.Loader):
    def find_spec(self, name, path=None, target=None):
        # Only what the snippet or the prefix imports, never a standard module's name: the
        # standard library and installed packages probe for optional modules (`msvcrt`,
        # `_winapi`) and take another path when they are missing, and a stand-in would break that.
        if name.split(".")[0] in _ldb_sys.stdlib_module_names:
            return None
        f = _ldb_sys._getframe(1)
        while f is not None and f.f_code.co_filename.startswith("<frozen "):
            f = f.f_back
        if f is None or f.f_globals.get("__name__") not in ("__main__", "__ldb_program__"):
            return None
        return _ldb_machinery.ModuleSpec(name, self, is_package=True)
    def create_module(self, spec):
        module = _LdbStandInModule(spec.name)
        module.__path__ = []
        return module
    def exec_module(self, module):
        _ldb_sys.stderr.write("ldb-exec: stand-in module " + module.__name__ + "\n")
_ldb_sys.meta_path.append(_LdbStandInFinder())
