//! The model's per-block verdicts: the schema we ask for and a forgiving parser for what comes back.
//!
//! The debugging prompt labels traced blocks (`[BLOCK-0]`, `[BLOCK-1]`, … or `LINE-k`, `CALL-k`)
//! and asks for `{"verdicts": [{"block": "BLOCK-3", "correct": false, "explanation": "..."}]}`.
//! Small local models rarely answer exactly that, so [`parse_verdicts`] reads, in order:
//! JSON anywhere in the reply (fenced or not, strict or Python-literal style with comments and
//! trailing commas, field-name and value variants), and failing that the paper's plain-text
//! format (`[BLOCK-3] ... correct: False ...`). Labels are normalised to the form the prompt used.
//! Anything that needed repair sets [`ParsedVerdicts::lenient`], so callers can count it.

mod labels;
mod text;

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::json::{json_spans, lenient_json};
use labels::Labels;
use text::text_verdicts;

/// A judgement of one traced block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Verdict {
    /// The block's label exactly as shown in the prompt, e.g. "BLOCK-3".
    pub block: String,
    /// Whether the block does what the task needs, judged from the values after it ran.
    pub correct: bool,
    /// Why: what the block did with these values and, if wrong, what it should do instead.
    pub explanation: String,
}

// Doc comments on the schema types become schema descriptions, which the model reads.

/// Verdicts on the traced blocks.
#[derive(Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct VerdictReply {
    /// One verdict per block shown, in the order shown.
    verdicts: Vec<Verdict>,
}

/// What [`parse_verdicts`] read from a reply.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct ParsedVerdicts {
    /// Verdicts in reply order, one per label (the first wins). Includes labels in `unknown`.
    pub verdicts: Vec<Verdict>,
    /// Labels asked for but not answered, in the order asked.
    pub missing: Vec<String>,
    /// Labels answered that were not asked for, in reply order.
    pub unknown: Vec<String>,
    /// True if anything had to be repaired: non-strict JSON, other field names or value forms,
    /// labels in another spelling, a dropped duplicate, or the plain-text fallback.
    pub lenient: bool,
}

/// Why no verdicts could be read. `Display` is addressed to the model, for a repair request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerdictError {
    #[error(
        "Your reply contains no JSON. Reply with one JSON object: {{\"verdicts\": [{{\"block\": \
         \"BLOCK-0\", \"correct\": true, \"explanation\": \"...\"}}, ...]}}, one entry per block."
    )]
    NoJson,
    #[error(
        "The JSON in your reply could not be used ({detail}). Reply with one JSON object: \
         {{\"verdicts\": [{{\"block\": \"BLOCK-0\", \"correct\": true, \"explanation\": \"...\"}}, \
         ...]}}, one entry per block."
    )]
    Malformed { detail: String },
    #[error(
        "Your reply gave no verdicts. Give one verdict per block: {{\"verdicts\": [{{\"block\": \
         \"BLOCK-0\", \"correct\": true, \"explanation\": \"...\"}}, ...]}}."
    )]
    Empty,
}

/// JSON schema of the reply (`{"verdicts": [Verdict, ...]}`), fit for OpenAI's strict
/// `json_schema` response format: everything inline, every property required, no extra ones.
pub fn verdict_schema() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    generator.into_root_schema_for::<VerdictReply>().to_value()
}

/// [`verdict_schema`] with the block labels as an enum and one verdict per label, so that a
/// grammar made from it (llama.cpp) or a strict `json_schema` endpoint can only produce a reply
/// that names the blocks shown. With no labels it is the plain schema.
pub fn verdict_schema_for(labels: &[String]) -> Value {
    let mut schema = verdict_schema();
    if labels.is_empty() {
        return schema;
    }
    let verdicts = &mut schema["properties"]["verdicts"];
    if let Some(block) = verdicts
        .get_mut("items")
        .and_then(|i| i.get_mut("properties"))
        .and_then(|p| p.get_mut("block"))
        .and_then(Value::as_object_mut)
    {
        block.insert("enum".into(), Value::from(labels.to_vec()));
    }
    if let Some(obj) = verdicts.as_object_mut() {
        obj.insert("minItems".into(), Value::from(labels.len()));
        obj.insert("maxItems".into(), Value::from(labels.len()));
    }
    schema
}

/// Read the verdicts in `reply`. `expected_labels` are the labels the prompt showed; they fix
/// the label form (`BLOCK-3`) and drive `missing`/`unknown`. They may be empty.
pub fn parse_verdicts(
    reply: &str,
    expected_labels: &[String],
) -> Result<ParsedVerdicts, VerdictError> {
    let labels = Labels::new(expected_labels);
    let text = reply.replace("\r\n", "\n");
    let mut seen_object = false;
    let mut problem: Option<String> = None;
    let mut best: Option<ParsedVerdicts> = None;

    // Separate objects that each hold one verdict (JSON lines) are read as one answer.
    let mut singles = Found::default();
    for span in json_spans(&text) {
        let Some(body) = text.get(span.clone()) else {
            continue;
        };
        let (value, repaired) = match serde_json::from_str::<Value>(body) {
            Ok(v) => (v, false),
            Err(strict) => match lenient_json(body) {
                Ok(v) => (v, true),
                Err(detail) => {
                    if body.starts_with('{') && problem.is_none() {
                        problem = Some(format!("{strict}; {detail}"));
                    }
                    continue;
                }
            },
        };
        seen_object |= contains_object(&value);
        let mut found = Found {
            repaired,
            ..Found::default()
        };
        let single = read_value(&value, &labels, &mut found);
        if let Some(p) = found.problem.take() {
            problem.get_or_insert(p);
        }
        if single {
            singles.repaired |= found.repaired;
            singles.verdicts.extend(found.verdicts);
        } else {
            consider(found, &labels, &mut best);
        }
    }
    consider(singles, &labels, &mut best);
    if let Some(parsed) = best {
        return Ok(parsed);
    }

    let from_text = text_verdicts(&text, &labels);
    if !from_text.is_empty() {
        return Ok(finish(from_text, true, &labels));
    }
    match problem {
        Some(detail) => Err(VerdictError::Malformed { detail }),
        None if seen_object => Err(VerdictError::Empty),
        None => Err(VerdictError::NoJson),
    }
}

/// Verdicts read from one JSON value, plus what went wrong along the way.
#[derive(Default)]
struct Found {
    verdicts: Vec<Verdict>,
    repaired: bool,
    /// The first reason an entry could not be used, for the error text.
    problem: Option<String>,
}

/// Keep `found` as the answer if it beats the best so far.
fn consider(found: Found, labels: &Labels, best: &mut Option<ParsedVerdicts>) {
    if found.verdicts.is_empty() {
        return;
    }
    let parsed = finish(found.verdicts, found.repaired, labels);
    if best.as_ref().is_none_or(|b| rank(&parsed) >= rank(b)) {
        *best = Some(parsed);
    }
}

/// Answers covering more of the asked labels win, then more answers, then cleaner ones; on a
/// tie the later one, since a model that shows an example first gives its real answer after.
fn rank(p: &ParsedVerdicts) -> (usize, usize, bool) {
    (
        p.verdicts.len().saturating_sub(p.unknown.len()),
        p.verdicts.len(),
        !p.lenient,
    )
}

/// Drop duplicate labels and compare with the labels asked for.
fn finish(raw: Vec<Verdict>, mut lenient: bool, labels: &Labels) -> ParsedVerdicts {
    let mut seen = HashSet::new();
    let mut verdicts = Vec::new();
    for v in raw {
        if seen.insert(v.block.clone()) {
            verdicts.push(v);
        } else {
            lenient = true;
        }
    }
    let expected: HashSet<&str> = labels.expected.iter().map(String::as_str).collect();
    let missing = labels
        .expected
        .iter()
        .filter(|l| !seen.contains(*l))
        .cloned()
        .collect();
    let unknown = if expected.is_empty() {
        Vec::new()
    } else {
        verdicts
            .iter()
            .filter(|v| !expected.contains(v.block.as_str()))
            .map(|v| v.block.clone())
            .collect()
    };
    ParsedVerdicts {
        verdicts,
        missing,
        unknown,
        lenient,
    }
}

// ---------------------------------------------------------------------------------------------
// From JSON values to verdicts

const LIST_KEYS: [&str; 8] = [
    "verdicts",
    "verdict",
    "blocks",
    "results",
    "answers",
    "items",
    "debug",
    "evaluations",
];
const BLOCK_KEYS: [&str; 9] = [
    "block",
    "label",
    "id",
    "blockid",
    "blocklabel",
    "blockname",
    "name",
    "blocknumber",
    "index",
];
const CORRECT_KEYS: [&str; 7] = [
    "correct",
    "iscorrect",
    "verdict",
    "correctness",
    "status",
    "result",
    "valid",
];
const EXPLANATION_KEYS: [&str; 10] = [
    "explanation",
    "explain",
    "reason",
    "reasoning",
    "why",
    "comment",
    "analysis",
    "description",
    "rationale",
    "details",
];

/// Read verdicts from `value` into `found`. Returns true when `value` was a lone verdict
/// object rather than a list of them.
fn read_value(value: &Value, labels: &Labels, found: &mut Found) -> bool {
    match value {
        Value::Array(items) => {
            read_list(items, labels, found);
            false
        }
        Value::Object(map) => read_object(map, labels, found),
        _ => false,
    }
}

fn read_object(map: &Map<String, Value>, labels: &Labels, found: &mut Found) -> bool {
    // {"verdicts": [...]} and its variants.
    if let Some((canonical, list)) = field(map, &LIST_KEYS) {
        match list {
            Value::Array(items) => {
                found.repaired |= !canonical;
                read_list(items, labels, found);
                return false;
            }
            Value::Object(inner) => {
                found.repaired = true;
                return read_object(inner, labels, found);
            }
            _ => {}
        }
    }
    // A lone verdict.
    if field(map, &CORRECT_KEYS).is_some() {
        if let Some(v) = read_entry(map, None, labels, found, 1) {
            found.verdicts.push(v);
        }
        return true;
    }
    // {"BLOCK-0": {...} or true, ...}: verdicts keyed by label.
    let keyed: Vec<(&String, &Value)> = map
        .iter()
        .filter(|(k, _)| labels.is_label_like(k))
        .collect();
    if !keyed.is_empty() {
        found.repaired = true;
        for (n, (key, entry)) in keyed.into_iter().enumerate() {
            let verdict = match entry {
                Value::Object(inner) => {
                    let label = labels.normalize(key);
                    read_entry(inner, Some(&label), labels, found, n + 1)
                }
                other => truth(other).map(|correct| Verdict {
                    block: labels.normalize(key),
                    correct,
                    explanation: String::new(),
                }),
            };
            found.verdicts.extend(verdict);
        }
        return false;
    }
    // Some other wrapper around a list of verdict objects.
    if let Some(items) = map.values().find_map(|v| match v {
        Value::Array(items) if items.iter().any(Value::is_object) => Some(items),
        _ => None,
    }) {
        found.repaired = true;
        read_list(items, labels, found);
    }
    false
}

fn read_list(items: &[Value], labels: &Labels, found: &mut Found) {
    // Entries without any label can only be placed by position, and only when the model
    // answered every block asked for.
    let unlabelled = items.iter().all(|item| match item {
        Value::Object(map) => field(map, &BLOCK_KEYS).is_none(),
        _ => true,
    });
    let by_position = unlabelled && !items.is_empty() && items.len() == labels.expected.len();
    for (n, item) in items.iter().enumerate() {
        let Value::Object(map) = item else { continue };
        let fallback = if by_position {
            found.repaired = true;
            labels.expected.get(n)
        } else {
            None
        };
        if let Some(v) = read_entry(map, fallback, labels, found, n + 1) {
            found.verdicts.push(v);
        }
    }
}

/// One verdict object; `None` (with a reason noted) when it lacks a usable label or verdict.
fn read_entry(
    map: &Map<String, Value>,
    fallback_label: Option<&String>,
    labels: &Labels,
    found: &mut Found,
    position: usize,
) -> Option<Verdict> {
    let mut note = |why: String| {
        found.problem.get_or_insert(why);
    };
    let block = match field(map, &BLOCK_KEYS) {
        Some((canonical, value)) => {
            let raw = match value {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                _ => {
                    note(format!("verdict {position}: `block` is not a label"));
                    return None;
                }
            };
            let block = labels.normalize(&raw);
            if !canonical || block != raw {
                found.repaired = true;
            }
            block
        }
        None => match fallback_label {
            Some(label) => label.clone(),
            None => {
                note(format!("verdict {position} has no `block` label"));
                return None;
            }
        },
    };
    let correct = match field(map, &CORRECT_KEYS) {
        Some((canonical, value)) => match truth(value) {
            Some(correct) => {
                if !canonical || !value.is_boolean() {
                    found.repaired = true;
                }
                correct
            }
            None => {
                note(format!(
                    "verdict {position}: `correct` is not true or false"
                ));
                return None;
            }
        },
        None => {
            note(format!("verdict {position} has no `correct` field"));
            return None;
        }
    };
    let explanation = match field(map, &EXPLANATION_KEYS) {
        Some((canonical, value)) => {
            found.repaired |= !canonical;
            match value {
                Value::String(s) => s.trim().to_string(),
                Value::Null => String::new(),
                other => other.to_string(),
            }
        }
        None => {
            found.repaired = true;
            String::new()
        }
    };
    Some(Verdict {
        block,
        correct,
        explanation,
    })
}

/// The first of `names` present in `map`, comparing keys without case or punctuation
/// (`block_id`, `Block ID` and `blockId` are all `blockid`). The flag says whether the key was
/// exactly the schema's name (`names[0]`), i.e. needed no repair.
fn field<'m>(map: &'m Map<String, Value>, names: &[&str]) -> Option<(bool, &'m Value)> {
    let schema_name = names.first().copied().unwrap_or_default();
    if let Some(value) = map.get(schema_name) {
        return Some((true, value));
    }
    let forms: Vec<(String, &Value)> = map.iter().map(|(k, v)| (key_form(k), v)).collect();
    names.iter().find_map(|name| {
        forms
            .iter()
            .find(|(form, _)| form == name)
            .map(|(_, v)| (false, *v))
    })
}

fn key_form(key: &str) -> String {
    key.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// A verdict's truth value from the forms models use.
fn truth(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => match n.as_f64() {
            Some(0.0) => Some(false),
            Some(1.0) => Some(true),
            _ => None,
        },
        Value::String(s) => word_truth(s),
        _ => None,
    }
}

const TRUE_WORDS: [&str; 12] = [
    "true", "yes", "y", "t", "1", "correct", "right", "ok", "okay", "pass", "passed", "valid",
];
const FALSE_WORDS: [&str; 17] = [
    "false",
    "no",
    "n",
    "f",
    "0",
    "incorrect",
    "wrong",
    "buggy",
    "bug",
    "fail",
    "failed",
    "error",
    "invalid",
    "not correct",
    "notcorrect",
    "incorrectly",
    "not ok",
];

pub(super) fn word_truth(s: &str) -> Option<bool> {
    let w = s
        .trim()
        .trim_matches(|c: char| c.is_ascii_punctuation() || c.is_whitespace())
        .to_lowercase();
    if TRUE_WORDS.contains(&w.as_str()) {
        return Some(true);
    }
    if FALSE_WORDS.contains(&w.as_str()) {
        return Some(false);
    }
    // "Incorrect - the loop skips 0", "Correct, because ...".
    for neg in ["incorrect", "wrong", "not correct", "false"] {
        if w.starts_with(neg) {
            return Some(false);
        }
    }
    for pos in ["correct", "true"] {
        if w.starts_with(pos) && !w.starts_with("correctly") {
            return Some(true);
        }
    }
    None
}

fn contains_object(value: &Value) -> bool {
    match value {
        Value::Object(_) => true,
        Value::Array(items) => items.iter().any(Value::is_object),
        _ => false,
    }
}
