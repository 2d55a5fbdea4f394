//! The kinds of runtime error `ldb check` reports: the taxonomy of the runtime-error prediction
//! paper (Bieber et al., 26 exception kinds), plus `Timeout` and `Other`.
//!
//! A real run names its exception by class name (and message, for `math domain error`); a
//! prediction names it from the same closed list, which the reply grammar enforces.

use serde::{Deserialize, Serialize};

/// One kind of runtime error. Serialised with the names the paper's data uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ErrorClass {
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

impl ErrorClass {
    /// Every class, in the paper's order, then `Timeout` and `Other`.
    pub const ALL: [ErrorClass; 28] = [
        ErrorClass::AssertionError,
        ErrorClass::AttributeError,
        ErrorClass::DecimalInvalidOperation,
        ErrorClass::EofError,
        ErrorClass::FileNotFoundError,
        ErrorClass::ImportError,
        ErrorClass::IndentationError,
        ErrorClass::IndexError,
        ErrorClass::KeyError,
        ErrorClass::MathDomainError,
        ErrorClass::MemoryError,
        ErrorClass::ModuleNotFoundError,
        ErrorClass::NameError,
        ErrorClass::OsError,
        ErrorClass::OverflowError,
        ErrorClass::ReError,
        ErrorClass::RecursionError,
        ErrorClass::RuntimeError,
        ErrorClass::StopIteration,
        ErrorClass::SyntaxError,
        ErrorClass::TabError,
        ErrorClass::TypeError,
        ErrorClass::UnboundLocalError,
        ErrorClass::ValueError,
        ErrorClass::ZeroDivisionError,
        ErrorClass::NumpyAxisError,
        ErrorClass::Timeout,
        ErrorClass::Other,
    ];

    /// The name as serialised (and as the paper's data spells it).
    pub fn name(self) -> &'static str {
        match self {
            ErrorClass::AssertionError => "AssertionError",
            ErrorClass::AttributeError => "AttributeError",
            ErrorClass::DecimalInvalidOperation => "decimal.InvalidOperation",
            ErrorClass::EofError => "EOFError",
            ErrorClass::FileNotFoundError => "FileNotFoundError",
            ErrorClass::ImportError => "ImportError",
            ErrorClass::IndentationError => "IndentationError",
            ErrorClass::IndexError => "IndexError",
            ErrorClass::KeyError => "KeyError",
            ErrorClass::MathDomainError => "MathDomainError",
            ErrorClass::MemoryError => "MemoryError",
            ErrorClass::ModuleNotFoundError => "ModuleNotFoundError",
            ErrorClass::NameError => "NameError",
            ErrorClass::OsError => "OSError",
            ErrorClass::OverflowError => "OverflowError",
            ErrorClass::ReError => "re.error",
            ErrorClass::RecursionError => "RecursionError",
            ErrorClass::RuntimeError => "RuntimeError",
            ErrorClass::StopIteration => "StopIteration",
            ErrorClass::SyntaxError => "SyntaxError",
            ErrorClass::TabError => "TabError",
            ErrorClass::TypeError => "TypeError",
            ErrorClass::UnboundLocalError => "UnboundLocalError",
            ErrorClass::ValueError => "ValueError",
            ErrorClass::ZeroDivisionError => "ZeroDivisionError",
            ErrorClass::NumpyAxisError => "numpy.AxisError",
            ErrorClass::Timeout => "Timeout",
            ErrorClass::Other => "Other",
        }
    }

    /// Parse a serialised name (also the bare Python class names `InvalidOperation`, `error`,
    /// `AxisError`); `None` for anything else.
    pub fn from_name(name: &str) -> Option<ErrorClass> {
        let bare = match name {
            "InvalidOperation" => "decimal.InvalidOperation",
            "AxisError" => "numpy.AxisError",
            other => other,
        };
        ErrorClass::ALL.into_iter().find(|c| c.name() == bare)
    }

    /// The class of an exception a real run raised, from its class name and message.
    /// Exceptions outside the taxonomy are `Other`.
    pub fn from_exception(kind: &str, message: &str) -> ErrorClass {
        if kind == "ValueError" && message.contains("math domain error") {
            return ErrorClass::MathDomainError;
        }
        // `re.error` is the only class of the list whose bare name is `error`.
        if kind == "error" {
            return ErrorClass::ReError;
        }
        match ErrorClass::from_name(kind) {
            Some(ErrorClass::Timeout | ErrorClass::Other) | None => ErrorClass::Other,
            Some(c) => c,
        }
    }
}

impl std::fmt::Display for ErrorClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_serde_and_from_name() {
        for class in ErrorClass::ALL {
            let json = serde_json::to_string(&class).unwrap();
            assert_eq!(json, format!("\"{}\"", class.name()));
            assert_eq!(ErrorClass::from_name(class.name()), Some(class));
        }
        assert_eq!(ErrorClass::from_name("NoSuchError"), None);
    }

    #[test]
    fn exceptions_map_to_the_taxonomy() {
        assert_eq!(
            ErrorClass::from_exception("ValueError", "math domain error"),
            ErrorClass::MathDomainError
        );
        assert_eq!(
            ErrorClass::from_exception("ValueError", "invalid literal"),
            ErrorClass::ValueError
        );
        assert_eq!(
            ErrorClass::from_exception("InvalidOperation", ""),
            ErrorClass::DecimalInvalidOperation
        );
        assert_eq!(
            ErrorClass::from_exception("error", "bad escape"),
            ErrorClass::ReError
        );
        assert_eq!(
            ErrorClass::from_exception("EOFError", ""),
            ErrorClass::EofError
        );
        assert_eq!(
            ErrorClass::from_exception("UnicodeDecodeError", ""),
            ErrorClass::Other
        );
        // A program's own exception class named like a pseudo-class is still just "Other".
        assert_eq!(ErrorClass::from_exception("Timeout", ""), ErrorClass::Other);
    }
}
