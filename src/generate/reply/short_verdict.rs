//! The short verdict: only the first wrong block and one sentence, instead of a verdict for
//! every block. A small model spends far fewer tokens on it, and it is all a repair needs.
//!
//! The reply is constrained to `{"block": <one of the shown labels>, "explanation": string}`
//! where the backend supports a schema; otherwise it is read leniently: the JSON if it names a
//! shown label, else the first shown label the text mentions.

use serde_json::Value;

/// The schema of a short verdict, with the shown labels as an enum.
pub fn first_wrong_schema(labels: &[String]) -> Value {
    serde_json::json!({
        "type": "object",
        "properties": {
            "block": {"type": "string", "enum": labels},
            "explanation": {"type": "string"}
        },
        "required": ["block", "explanation"],
        "additionalProperties": false
    })
}

/// What a short verdict said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FirstWrong {
    /// The block named, one of the shown labels.
    pub block: String,
    pub explanation: String,
    /// Read from well-formed JSON (not found in free text).
    pub well_formed: bool,
}

/// Read a short verdict from `reply`; `None` when it names no shown label.
pub fn parse_first_wrong(reply: &str, labels: &[String]) -> Option<FirstWrong> {
    let trimmed = reply.trim();
    if let Ok(v) = serde_json::from_str::<Value>(trimmed) {
        if let Some(b) = v.get("block").and_then(Value::as_str) {
            if labels.iter().any(|l| l == b) {
                return Some(FirstWrong {
                    block: b.to_string(),
                    explanation: v
                        .get("explanation")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    well_formed: true,
                });
            }
        }
    }
    labels
        .iter()
        .filter_map(|l| mention(reply, l).map(|at| (at, l)))
        // The longest label at the earliest position: BLOCK-12 is not BLOCK-1.
        .min_by_key(|(at, l)| (*at, std::cmp::Reverse(l.len())))
        .map(|(_, l)| FirstWrong {
            block: l.clone(),
            explanation: trimmed.chars().take(400).collect(),
            well_formed: false,
        })
}

/// Byte offset of the first mention of `label` not followed by more of a label (a digit).
fn mention(text: &str, label: &str) -> Option<usize> {
    text.match_indices(label)
        .find(|(at, _)| {
            !text[at + label.len()..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        })
        .map(|(at, _)| at)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels() -> Vec<String> {
        ["BLOCK-0", "BLOCK-1", "BLOCK-12"]
            .map(String::from)
            .to_vec()
    }

    #[test]
    fn json_first_then_the_first_label_mentioned() {
        let j = parse_first_wrong(
            r#"{"block": "BLOCK-1", "explanation": "off by one"}"#,
            &labels(),
        )
        .expect("found");
        assert_eq!(
            (j.block.as_str(), j.explanation.as_str(), j.well_formed),
            ("BLOCK-1", "off by one", true)
        );
        let t =
            parse_first_wrong("The bug is in BLOCK-12, then BLOCK-0.", &labels()).expect("found");
        assert_eq!((t.block.as_str(), t.well_formed), ("BLOCK-12", false));
        // BLOCK-1 inside BLOCK-12 is not a mention of BLOCK-1.
        let t = parse_first_wrong("BLOCK-12 is wrong", &labels()).expect("found");
        assert_eq!(t.block, "BLOCK-12");
        assert!(parse_first_wrong(r#"{"block": "BLOCK-9"}"#, &labels()).is_none());
    }

    #[test]
    fn the_schema_lists_the_labels() {
        let s = first_wrong_schema(&labels());
        assert_eq!(s["properties"]["block"]["enum"][2], "BLOCK-12");
        #[cfg(feature = "local-model")]
        assert!(llama_cpp_2::json_schema_to_grammar(&s.to_string()).is_ok());
    }
}
