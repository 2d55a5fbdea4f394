//! The kinds of runtime error `ldb check` reports: the taxonomy of the runtime-error prediction
//! paper (Bieber et al., 26 exception kinds), plus `Timeout` and `Other`.
//!
//! A real run names its exception by class name (and message, for `math domain error`); a
//! prediction names it from the same closed list, which the reply grammar enforces.

use serde::{Deserialize, Serialize};

/// One kind of runtime error. Serialised with the names the paper's data uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum RuntimeErrorKind {
    AssertionError,
    AttributeError,
    #[serde(rename = "decimal.InvalidOperation")]
    DecimalInvalidOperation,
    #[serde(rename = "EOFError")]
    EofError,
    FileNotFoundError,
    ImportError,
    IndentationError,
    IndexError,
    KeyError,
    /// `ValueError: math domain error` (a class of its own in the paper's data).
    MathDomainError,
    MemoryError,
    ModuleNotFoundError,
    NameError,
    #[serde(rename = "OSError")]
    OsError,
    OverflowError,
    #[serde(rename = "re.error")]
    ReError,
    RecursionError,
    RuntimeError,
    StopIteration,
    SyntaxError,
    TabError,
    TypeError,
    UnboundLocalError,
    ValueError,
    ZeroDivisionError,
    #[serde(rename = "numpy.AxisError")]
    NumpyAxisError,
    /// The run did not finish within the time limit.
    Timeout,
    /// Any other exception, or a run that ended abnormally (killed by a signal, output flood).
    Other,
}

impl RuntimeErrorKind {
    /// Every class, in the paper's order, then `Timeout` and `Other`.
    pub const ALL: [RuntimeErrorKind; 28] = [
        RuntimeErrorKind::AssertionError,
        RuntimeErrorKind::AttributeError,
        RuntimeErrorKind::DecimalInvalidOperation,
        RuntimeErrorKind::EofError,
        RuntimeErrorKind::FileNotFoundError,
        RuntimeErrorKind::ImportError,
        RuntimeErrorKind::IndentationError,
        RuntimeErrorKind::IndexError,
        RuntimeErrorKind::KeyError,
        RuntimeErrorKind::MathDomainError,
        RuntimeErrorKind::MemoryError,
        RuntimeErrorKind::ModuleNotFoundError,
        RuntimeErrorKind::NameError,
        RuntimeErrorKind::OsError,
        RuntimeErrorKind::OverflowError,
        RuntimeErrorKind::ReError,
        RuntimeErrorKind::RecursionError,
        RuntimeErrorKind::RuntimeError,
        RuntimeErrorKind::StopIteration,
        RuntimeErrorKind::SyntaxError,
        RuntimeErrorKind::TabError,
        RuntimeErrorKind::TypeError,
        RuntimeErrorKind::UnboundLocalError,
        RuntimeErrorKind::ValueError,
        RuntimeErrorKind::ZeroDivisionError,
        RuntimeErrorKind::NumpyAxisError,
        RuntimeErrorKind::Timeout,
        RuntimeErrorKind::Other,
    ];

    /// The name as serialised (and as the paper's data spells it).
    pub fn name(self) -> &'static str {
        match self {
            RuntimeErrorKind::AssertionError => "AssertionError",
            RuntimeErrorKind::AttributeError => "AttributeError",
            RuntimeErrorKind::DecimalInvalidOperation => "decimal.InvalidOperation",
            RuntimeErrorKind::EofError => "EOFError",
            RuntimeErrorKind::FileNotFoundError => "FileNotFoundError",
            RuntimeErrorKind::ImportError => "ImportError",
            RuntimeErrorKind::IndentationError => "IndentationError",
            RuntimeErrorKind::IndexError => "IndexError",
            RuntimeErrorKind::KeyError => "KeyError",
            RuntimeErrorKind::MathDomainError => "MathDomainError",
            RuntimeErrorKind::MemoryError => "MemoryError",
            RuntimeErrorKind::ModuleNotFoundError => "ModuleNotFoundError",
            RuntimeErrorKind::NameError => "NameError",
            RuntimeErrorKind::OsError => "OSError",
            RuntimeErrorKind::OverflowError => "OverflowError",
            RuntimeErrorKind::ReError => "re.error",
            RuntimeErrorKind::RecursionError => "RecursionError",
            RuntimeErrorKind::RuntimeError => "RuntimeError",
            RuntimeErrorKind::StopIteration => "StopIteration",
            RuntimeErrorKind::SyntaxError => "SyntaxError",
            RuntimeErrorKind::TabError => "TabError",
            RuntimeErrorKind::TypeError => "TypeError",
            RuntimeErrorKind::UnboundLocalError => "UnboundLocalError",
            RuntimeErrorKind::ValueError => "ValueError",
            RuntimeErrorKind::ZeroDivisionError => "ZeroDivisionError",
            RuntimeErrorKind::NumpyAxisError => "numpy.AxisError",
            RuntimeErrorKind::Timeout => "Timeout",
            RuntimeErrorKind::Other => "Other",
        }
    }

    /// Parse a serialised name (also the bare Python class names `InvalidOperation`, `error`,
    /// `AxisError`); `None` for anything else.
    pub fn from_name(name: &str) -> Option<RuntimeErrorKind> {
        let bare = match name {
            "InvalidOperation" => "decimal.InvalidOperation",
            "AxisError" => "numpy.AxisError",
            other => other,
        };
        RuntimeErrorKind::ALL.into_iter().find(|c| c.name() == bare)
    }

    /// The class of an exception a real run raised, from its class name and message.
    /// Exceptions outside the taxonomy are `Other`.
    pub fn from_exception(kind: &str, message: &str) -> RuntimeErrorKind {
        if kind == "ValueError" && message.contains("math domain error") {
            return RuntimeErrorKind::MathDomainError;
        }
        // `re.error` is the only class of the list whose bare name is `error`.
        if kind == "error" {
            return RuntimeErrorKind::ReError;
        }
        match RuntimeErrorKind::from_name(kind) {
            Some(RuntimeErrorKind::Timeout | RuntimeErrorKind::Other) | None => {
                RuntimeErrorKind::Other
            }
            Some(c) => c,
        }
    }
}

impl std::fmt::Display for RuntimeErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_serde_and_from_name() {
        for class in RuntimeErrorKind::ALL {
            let json = serde_json::to_string(&class).unwrap();
            assert_eq!(json, format!("\"{}\"", class.name()));
            assert_eq!(RuntimeErrorKind::from_name(class.name()), Some(class));
        }
        assert_eq!(RuntimeErrorKind::from_name("NoSuchError"), None);
    }

    #[test]
    fn exceptions_map_to_the_taxonomy() {
        assert_eq!(
            RuntimeErrorKind::from_exception("ValueError", "math domain error"),
            RuntimeErrorKind::MathDomainError
        );
        assert_eq!(
            RuntimeErrorKind::from_exception("ValueError", "invalid literal"),
            RuntimeErrorKind::ValueError
        );
        assert_eq!(
            RuntimeErrorKind::from_exception("InvalidOperation", ""),
            RuntimeErrorKind::DecimalInvalidOperation
        );
        assert_eq!(
            RuntimeErrorKind::from_exception("error", "bad escape"),
            RuntimeErrorKind::ReError
        );
        assert_eq!(
            RuntimeErrorKind::from_exception("EOFError", ""),
            RuntimeErrorKind::EofError
        );
        assert_eq!(
            RuntimeErrorKind::from_exception("UnicodeDecodeError", ""),
            RuntimeErrorKind::Other
        );
        // A program's own exception class named like a pseudo-class is still just "Other".
        assert_eq!(
            RuntimeErrorKind::from_exception("Timeout", ""),
            RuntimeErrorKind::Other
        );
    }
}
