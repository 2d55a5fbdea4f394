"""Python-level tracer: the same recorder as the native hook, driven through sys.settrace.

Kept to measure what the native hook saves; the per-line work here is what a pure-Python
tracer pays on every line of the traced program."""
import sys
import _ldb


def install(scopes, program_filename):
    by_code = {}
    module_units = None
    for name, first_line, units in scopes:
        if name == "<module>":
            module_units = units
        else:
            by_code[(name, first_line)] = units
    py_call, py_line = _ldb.py_call, _ldb.py_line
    py_return, py_exception = _ldb.py_return, _ldb.py_exception

    def make_local(units):
        n = len(units)
        current = [0]

        def local(frame, event, arg):
            if event == "line":
                line = frame.f_lineno
                unit = units[line] if 0 <= line < n else 0
                if unit and unit != current[0]:
                    current[0] = unit
                    py_line(frame)
            elif event == "return":
                py_return(frame, arg)
            elif event == "exception":
                py_exception(frame, arg)
            return local

        return local

    def global_trace(frame, event, arg):
        code = frame.f_code
        if code.co_filename != program_filename:
            return None
        if code.co_name == "<module>":
            units = module_units
        else:
            units = by_code.get((code.co_name, code.co_firstlineno))
        if units is None:
            return None
        py_call(frame)
        return make_local(units)

    sys.settrace(global_trace)
