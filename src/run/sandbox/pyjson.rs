//! JSON values ↔ Python objects, so the worker and the harness exchange plain dicts without the
//! harness importing `json` (a measurable part of every run's start-up).

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

/// Convert a JSON value into the equivalent Python object.
pub fn to_python<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                PyFloat::new(py, n.as_f64().unwrap_or(f64::NAN)).into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_python(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(k, to_python(py, v)?)?;
            }
            dict.into_any()
        }
    })
}

/// Convert plain Python data (dict, list, tuple, str, int, float, bool, None) into JSON.
/// Anything else becomes its `str()`, so a surprising object cannot make the worker fail.
pub fn from_python(obj: &Bound<'_, PyAny>) -> Value {
    if obj.is_none() {
        Value::Null
    } else if let Ok(b) = obj.cast_exact::<PyBool>() {
        Value::Bool(b.is_true())
    } else if obj.is_exact_instance_of::<PyInt>() {
        obj.extract::<i64>()
            .map(|i| Value::Number(i.into()))
            .unwrap_or_else(|_| Value::String(obj.to_string()))
    } else if let Ok(f) = obj.cast_exact::<PyFloat>() {
        Number::from_f64(f.value())
            .map(Value::Number)
            .unwrap_or(Value::Null)
    } else if let Ok(s) = obj.cast_exact::<PyString>() {
        Value::String(s.to_string())
    } else if let Ok(d) = obj.cast_exact::<PyDict>() {
        let mut map = Map::new();
        for (k, v) in d.iter() {
            map.insert(k.to_string(), from_python(&v));
        }
        Value::Object(map)
    } else if let Ok(l) = obj.cast_exact::<PyList>() {
        Value::Array(l.iter().map(|v| from_python(&v)).collect())
    } else if let Ok(t) = obj.cast_exact::<PyTuple>() {
        Value::Array(t.iter().map(|v| from_python(&v)).collect())
    } else {
        Value::String(obj.str().map(|s| s.to_string()).unwrap_or_default())
    }
}
