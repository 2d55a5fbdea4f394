//! Safe, bounded rendering of Python values for traces and test reports.
//!
//! `repr()` can raise, loop over a million items or print a 100,000-digit integer; the debugger
//! needs a short, faithful picture. Built-in containers are walked with a character budget, other
//! objects use their own `repr` guarded against exceptions, and every cut is marked visibly.

use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PySet, PySlice, PyString, PyTuple,
};

/// Containers nested deeper than this render as `...`.
const MAX_DEPTH: usize = 6;
/// Integers wider than this many bits are summarised instead of converted to decimal.
const MAX_INT_BITS: u64 = 4_000;

/// Render `obj` in at most about `budget` characters (a marker may add a few).
pub fn render(obj: &Bound<'_, PyAny>, budget: usize) -> String {
    let mut out = String::new();
    let mut left = budget.max(8);
    write_value(obj, &mut out, &mut left, 0);
    out
}

fn write_value(obj: &Bound<'_, PyAny>, out: &mut String, left: &mut usize, depth: usize) {
    if depth > MAX_DEPTH {
        push_str(out, left, "...");
        return;
    }
    if let Ok(list) = obj.cast_exact::<PyList>() {
        write_seq(list.iter(), list.len(), "[", "]", out, left, depth);
    } else if let Ok(tuple) = obj.cast_exact::<PyTuple>() {
        let close = if tuple.len() == 1 { ",)" } else { ")" };
        write_seq(tuple.iter(), tuple.len(), "(", close, out, left, depth);
    } else if let Ok(dict) = obj.cast_exact::<PyDict>() {
        write_dict(dict, out, left, depth);
    } else if let Ok(set) = obj.cast_exact::<PySet>() {
        if set.is_empty() {
            push_str(out, left, "set()");
        } else {
            write_seq(set.iter(), set.len(), "{", "}", out, left, depth);
        }
    } else if let Ok(set) = obj.cast_exact::<PyFrozenSet>() {
        push_punct(out, left, "frozenset(");
        write_seq(set.iter(), set.len(), "{", "}", out, left, depth);
        out.push(')');
    } else if let Ok(s) = obj.cast_exact::<PyString>() {
        write_str(s, out, left);
    } else if obj.is_exact_instance_of::<PyInt>() && !obj.is_instance_of::<PyBool>() {
        write_int(obj, out, left);
    } else {
        write_repr(obj, out, left, obj.is_exact_instance_of::<PyFloat>());
    }
}

fn write_seq<'py>(
    items: impl Iterator<Item = Bound<'py, PyAny>>,
    len: usize,
    open: &str,
    close: &str,
    out: &mut String,
    left: &mut usize,
    depth: usize,
) {
    push_punct(out, left, open);
    for (i, item) in items.enumerate() {
        if !write_item(out, left, i, len, |buf, l| {
            write_value(&item, buf, l, depth + 1)
        }) {
            break;
        }
    }
    out.push_str(close);
}

fn write_dict(dict: &Bound<'_, PyDict>, out: &mut String, left: &mut usize, depth: usize) {
    let len = dict.len();
    push_punct(out, left, "{");
    for (i, (k, v)) in dict.iter().enumerate() {
        let item = |buf: &mut String, l: &mut usize| {
            write_value(&k, buf, l, depth + 1);
            push_punct(buf, l, ": ");
            write_value(&v, buf, l, depth + 1);
        };
        if !write_item(out, left, i, len, item) {
            break;
        }
    }
    out.push('}');
}

/// Write element `i` of `len` if it fits whole; otherwise say how many are left and stop.
/// The first element is always written (cut if need be), so a value never renders empty.
fn write_item(
    out: &mut String,
    left: &mut usize,
    i: usize,
    len: usize,
    write: impl FnOnce(&mut String, &mut usize),
) -> bool {
    if i > 0 {
        push_punct(out, left, ", ");
    }
    let mut buf = String::new();
    let mut budget = *left;
    write(&mut buf, &mut budget);
    let fits = budget > 0;
    if fits || i == 0 {
        out.push_str(&buf);
        *left = budget;
    }
    if fits {
        return true;
    }
    let rest = if i == 0 { len - 1 } else { len - i };
    if rest > 0 {
        out.push_str(&format!("…(+{rest} more)"));
    }
    false
}

/// Brackets and separators use the budget but are never cut.
fn push_punct(out: &mut String, left: &mut usize, text: &str) {
    out.push_str(text);
    *left = left.saturating_sub(text.chars().count());
}

fn write_str(s: &Bound<'_, PyString>, out: &mut String, left: &mut usize) {
    let len = s.as_any().len().unwrap_or(0);
    // Only the kept prefix is repr'd, so a 10 MB string costs as much as a short one.
    let keep = (*left).saturating_sub(2).max(1);
    if len > keep {
        let head = s
            .as_any()
            .get_item(PySlice::new(s.py(), 0, keep as isize, 1))
            .and_then(|h| h.repr())
            .map(|r| r.to_string())
            .unwrap_or_else(|_| "'?'".to_string());
        out.push_str(&head);
        out.push_str(&format!("…[+{} chars]", len - keep));
        *left = 0;
    } else {
        let text = s
            .repr()
            .map(|r| r.to_string())
            .unwrap_or_else(|_| "'?'".into());
        push_str(out, left, &text);
    }
}

fn write_int(obj: &Bound<'_, PyAny>, out: &mut String, left: &mut usize) {
    let bits = obj
        .call_method0("bit_length")
        .and_then(|b| b.extract::<u64>())
        .unwrap_or(0);
    if bits > MAX_INT_BITS {
        // Decimal conversion of a huge int is quadratic and refused past 4300 digits anyway.
        let digits = (bits as f64 * std::f64::consts::LOG10_2).floor() as u64 + 1;
        push_str(out, left, &format!("<int with about {digits} digits>"));
    } else {
        write_repr(obj, out, left, true);
    }
}

/// `repr(obj)`, never raising, with object addresses removed (they change from run to run and
/// carry no meaning for the debugger) and a visible cut when over budget.
fn write_repr(obj: &Bound<'_, PyAny>, out: &mut String, left: &mut usize, trusted: bool) {
    let text = match obj.repr() {
        Ok(r) => r.to_string(),
        Err(err) => {
            let kind = obj
                .get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_else(|_| "object".into());
            let exc = err
                .get_type(obj.py())
                .name()
                .map(|n| n.to_string())
                .unwrap_or_else(|_| "Exception".into());
            format!("<{kind} object; repr() raised {exc}>")
        }
    };
    let text = if trusted {
        text
    } else {
        strip_addresses(&text)
    };
    push_str(out, left, &text);
}

/// Append `text`, cutting it at the budget with a marker saying how much was dropped.
fn push_str(out: &mut String, left: &mut usize, text: &str) {
    let n = text.chars().count();
    if n <= *left {
        out.push_str(text);
        *left -= n;
        return;
    }
    let kept: String = text.chars().take(*left).collect();
    out.push_str(&kept);
    out.push_str(&format!("…[+{} chars]", n - *left));
    *left = 0;
}

/// Remove ` at 0x7f..` from default reprs such as `<Node object at 0x7f3a2c>`.
pub fn strip_addresses(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find(" at 0x") {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 6..];
        let hex_len = after.bytes().take_while(|b| b.is_ascii_hexdigit()).count();
        if hex_len == 0 {
            out.push_str(" at 0x");
        }
        rest = &after[hex_len..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::strip_addresses;

    #[test]
    fn addresses_are_removed_from_default_reprs() {
        assert_eq!(
            strip_addresses("<__main__.Node object at 0x7f3a2c10>"),
            "<__main__.Node object>"
        );
        assert_eq!(strip_addresses("meet at 0xZ"), "meet at 0xZ");
    }
}
