//! Prefixes: what the model proposes, how its reply is read, and how a failing statement is
//! taken out of a prefix.
//!
//! The model answers with JSON in Treefix's response type, `{"imports": [...],
//! "initialization": ...}`, constrained by a [`JsonSchema`] (a grammar for the embedded model,
//! `response_format` for endpoints). When the snippet has undefined names, `initialization`
//! is an object with one required entry per name (`{"readings": "[3, 1, 4]"}`), so that even a
//! small model gives every name a value instead of copying the snippet or an example; without
//! names it is Treefix's list of statements. Replies are still read leniently. A prefix is kept
//! as Python source; its statements are found with the parser, never by running it here.

use std::collections::HashSet;

use rustpython_parser::ast::{self, Stmt};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::generate::model::JsonSchema;
use crate::python::source::{parse_module, SourceFile};
use crate::python::text::dedent;

/// A prefix: Python source run before the snippet.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prefix {
    pub code: String,
}

/// Treefix's reply form (statements in both lists), used for a prefix in a conversation's
/// history.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrefixReply {
    pub imports: Vec<String>,
    pub initialization: Vec<String>,
}

/// Schema of the reply, strict-mode compatible (all properties required, no others). With
/// `names`, `initialization` has one required string per name, in order.
pub fn prefix_schema(names: &[String]) -> JsonSchema {
    let list = serde_json::json!({"type": "array", "items": {"type": "string"}});
    let initialization = if names.is_empty() {
        list.clone()
    } else {
        let properties: serde_json::Map<String, Value> = names
            .iter()
            .map(|n| (n.clone(), serde_json::json!({"type": "string"})))
            .collect();
        serde_json::json!({
            "type": "object",
            "properties": properties,
            "required": names,
            "additionalProperties": false,
        })
    };
    JsonSchema {
        name: "prefix".into(),
        schema: serde_json::json!({
            "type": "object",
            "properties": {"imports": list, "initialization": initialization},
            "required": ["imports", "initialization"],
            "additionalProperties": false,
        }),
    }
}

/// Why a reply gave no usable prefix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplyError {
    #[error("the reply holds no JSON object")]
    NoJson,
    #[error("the reply's JSON has neither `imports` nor `initialization`")]
    NoFields,
    #[error("the prefix does not parse as Python (line {line}: {message})")]
    NotPython { line: u32, message: String },
}

/// One `initialization` entry keyed by the name it is for: code that defines the name, or an
/// expression that becomes its value.
fn named_entry(name: &str, code: &str) -> String {
    let code = dedent(code.trim_matches('\n'));
    // `name = name` can never define it; small models answer `"Snowy": "Snowy"` when they
    // mean the text.
    if code.trim() == name {
        return format!("{name} = '{name}'");
    }
    let src = SourceFile::new(code.clone());
    let Ok(suite) = parse_module(&src) else {
        return code;
    };
    if suite.iter().any(|s| binds(s, name)) {
        return code;
    }
    // The last statement is an expression: it is the value.
    match suite.last() {
        Some(Stmt::Expr(e)) => {
            let start = u32::from(ast::Ranged::range(e).start()) as usize;
            match (code.get(..start), code.get(start..)) {
                (Some(head), Some(value)) => format!("{head}{name} = {value}"),
                _ => code,
            }
        }
        _ => code,
    }
}

/// Whether top-level statement `stmt` binds `name`.
fn binds(stmt: &Stmt, name: &str) -> bool {
    let target_binds = |t: &ast::Expr| match t {
        ast::Expr::Name(n) => n.id.as_str() == name,
        ast::Expr::Tuple(t) => t
            .elts
            .iter()
            .any(|e| matches!(e, ast::Expr::Name(n) if n.id.as_str() == name)),
        _ => false,
    };
    match stmt {
        Stmt::Assign(a) => a.targets.iter().any(target_binds),
        Stmt::AnnAssign(a) => a.value.is_some() && target_binds(&a.target),
        Stmt::FunctionDef(f) => f.name.as_str() == name,
        Stmt::AsyncFunctionDef(f) => f.name.as_str() == name,
        Stmt::ClassDef(c) => c.name.as_str() == name,
        Stmt::Import(i) => i.names.iter().any(|a| {
            a.asname.as_ref().map_or_else(
                || a.name.split('.').next() == Some(name),
                |n| n.as_str() == name,
            )
        }),
        Stmt::ImportFrom(i) => i
            .names
            .iter()
            .any(|a| a.asname.as_ref().unwrap_or(&a.name).as_str() == name),
        Stmt::With(w) => w
            .items
            .iter()
            .any(|i| i.optional_vars.as_deref().is_some_and(target_binds)),
        _ => false,
    }
}

/// Entries keyed by the name they define, reordered so that an entry follows the entries
/// defining the names it uses (stable otherwise; a cycle keeps the given order).
fn dependency_order(mut keyed: Vec<(&String, String)>) -> Vec<String> {
    let needs: Vec<Vec<String>> = keyed
        .iter()
        .map(|(_, code)| {
            crate::python::names::undefined::undefined_names(&SourceFile::new(code.clone()))
                .map(|u| u.name_list())
                .unwrap_or_default()
        })
        .collect();
    let mut pending: Vec<(usize, &String, String)> = keyed
        .drain(..)
        .enumerate()
        .map(|(i, (name, code))| (i, name, code))
        .collect();
    let mut out = Vec::new();
    while !pending.is_empty() {
        let waiting: Vec<&String> = pending.iter().map(|(_, n, _)| *n).collect();
        let ready = pending
            .iter()
            .position(|(i, name, _)| {
                needs
                    .get(*i)
                    .is_none_or(|uses| !uses.iter().any(|u| u != *name && waiting.contains(&u)))
            })
            .unwrap_or(0);
        let (_, _, code) = pending.remove(ready);
        out.push(code);
    }
    out
}

/// An `imports` entry: a statement, or a bare module name (`"math"` → `import math`).
fn import_entry(entry: &str) -> String {
    let e = entry.trim();
    let bare = !e.is_empty()
        && e.split('.').all(|part| {
            part.chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
                && part.chars().all(|c| c.is_alphanumeric() || c == '_')
        });
    if bare {
        format!("import {e}")
    } else {
        dedent(entry)
    }
}

impl Prefix {
    pub fn new(code: impl Into<String>) -> Self {
        Prefix { code: code.into() }
    }

    pub fn is_empty(&self) -> bool {
        self.code.trim().is_empty()
    }

    /// Read a model reply. Entries that do not parse on their own are dropped when the rest
    /// then parses (one bad entry should not cost the whole prefix).
    /// `names` are the undefined names the prompt listed: entries keyed by name are ordered so
    /// that an entry comes after the entries defining the names it uses, else in that order.
    pub fn from_reply(reply: &str, names: &[String]) -> Result<(Prefix, Vec<String>), ReplyError> {
        let value = json_object(reply).ok_or(ReplyError::NoJson)?;
        let obj = value.as_object().ok_or(ReplyError::NoJson)?;
        let field = |keys: &[&str]| -> Option<&Value> {
            obj.iter()
                .find(|(k, _)| keys.iter().any(|key| k.to_lowercase().starts_with(key)))
                .map(|(_, v)| v)
        };
        let strings = |v: &Value| -> Vec<String> {
            match v {
                Value::Array(items) => items
                    .iter()
                    .filter_map(|i| i.as_str().map(str::to_string))
                    .collect(),
                Value::String(s) => vec![s.clone()],
                _ => Vec::new(),
            }
        };
        let imports = field(&["import"]);
        let inits = field(&["initiali", "init"]);
        if imports.is_none() && inits.is_none() {
            return Err(ReplyError::NoFields);
        }
        let mut entries: Vec<String> = imports
            .map(strings)
            .unwrap_or_default()
            .iter()
            .map(|e| import_entry(e))
            .collect();
        match inits {
            Some(Value::Object(named)) => {
                let mut keyed: Vec<(&String, String)> = named
                    .iter()
                    .filter_map(|(name, code)| Some((name, named_entry(name, code.as_str()?))))
                    .collect();
                keyed.sort_by_key(|(name, _)| {
                    names.iter().position(|n| n == *name).unwrap_or(usize::MAX)
                });
                entries.extend(dependency_order(keyed));
            }
            Some(other) => entries.extend(strings(other).iter().map(|e| dedent(e))),
            None => {}
        }
        entries.retain(|e| !e.trim().is_empty());
        let whole = entries.join("\n");
        match parses(&whole) {
            Ok(()) => Ok((Prefix::new(whole), Vec::new())),
            Err(first_error) => {
                let (kept, dropped): (Vec<String>, Vec<String>) =
                    entries.into_iter().partition(|e| parses(e).is_ok());
                let rest = kept.join("\n");
                if dropped.is_empty() || parses(&rest).is_err() {
                    return Err(first_error);
                }
                Ok((Prefix::new(rest), dropped))
            }
        }
    }

    /// The prefix as the reply form, for the conversation history of a refinement prompt.
    pub fn as_reply(&self) -> PrefixReply {
        let mut reply = PrefixReply::default();
        for (text, is_import) in self.statements() {
            if is_import {
                reply.imports.push(text);
            } else {
                reply.initialization.push(text);
            }
        }
        reply
    }

    /// Top-level statements of the prefix with their line ranges.
    fn spans(&self) -> Vec<(u32, u32, bool)> {
        let src = SourceFile::new(self.code.clone());
        let Ok(suite) = parse_module(&src) else {
            return Vec::new();
        };
        suite
            .iter()
            .map(|s| {
                let range = ast::Ranged::range(s);
                let first = src.line_of_offset(u32::from(range.start()));
                let last = src.line_of_offset(u32::from(range.end()).saturating_sub(1));
                (
                    first,
                    last,
                    matches!(s, Stmt::Import(_) | Stmt::ImportFrom(_)),
                )
            })
            .collect()
    }

    /// The top-level statements as text, each with whether it is an import.
    pub fn statements(&self) -> Vec<(String, bool)> {
        let lines: Vec<&str> = self.code.lines().collect();
        self.spans()
            .into_iter()
            .map(|(first, last, is_import)| {
                let text = lines
                    .get((first as usize).saturating_sub(1)..(last as usize).min(lines.len()))
                    .map(|l| l.join("\n"))
                    .unwrap_or_default();
                (text, is_import)
            })
            .collect()
    }

    /// The prefix without top-level statements that repeat one of `snippet_statements`
    /// (compared with whitespace collapsed), and those statements. Small models often copy the
    /// snippet into the prefix, which initialises nothing and runs the snippet's code twice.
    pub fn without_copies(&self, snippet_statements: &HashSet<String>) -> (Prefix, Vec<String>) {
        let mut kept = Vec::new();
        let mut copies = Vec::new();
        for (text, _) in self.statements() {
            if snippet_statements.contains(&collapse(&text)) {
                copies.push(text);
            } else {
                kept.push(text);
            }
        }
        if copies.is_empty() {
            return (self.clone(), copies);
        }
        (Prefix::new(kept.join("\n")), copies)
    }

    /// The prefix without the top-level statement holding `line` (Treefix's post-processing:
    /// a statement that raises is dropped and the rest tried again), and that statement.
    pub fn without_line(&self, line: u32) -> Option<(Prefix, String)> {
        let spans = self.spans();
        let &(first, last, _) = spans.iter().find(|(f, l, _)| *f <= line && line <= *l)?;
        let mut kept = Vec::new();
        let mut removed = Vec::new();
        for (i, text) in self.code.lines().enumerate() {
            let n = i as u32 + 1;
            if n >= first && n <= last {
                removed.push(text);
            } else {
                kept.push(text);
            }
        }
        Some((Prefix::new(kept.join("\n")), removed.join("\n")))
    }
}

/// `program` without the copy of `prefix` a model put at its start: the leading top-level
/// statements that repeat one of the prefix's statements. The prefix runs before the program
/// anyway, so running them again changes nothing; a program that does not parse is returned
/// as it is.
pub fn without_prefix_copy(program: &str, prefix: &str) -> String {
    let copies: HashSet<String> = Prefix::new(prefix)
        .statements()
        .into_iter()
        .map(|(text, _)| collapse(&text))
        .collect();
    let ours = Prefix::new(program);
    let spans = ours.spans();
    let lines: Vec<&str> = program.lines().collect();
    let mut cut = 0u32;
    for (first, last, _) in spans {
        let text = lines
            .get((first as usize).saturating_sub(1)..(last as usize).min(lines.len()))
            .map(|l| l.join("\n"))
            .unwrap_or_default();
        if !copies.contains(&collapse(&text)) {
            break;
        }
        cut = last;
    }
    if cut == 0 {
        return program.to_string();
    }
    let rest: Vec<&str> = lines.iter().skip(cut as usize).copied().collect();
    let start = rest
        .iter()
        .position(|l| !l.trim().is_empty())
        .unwrap_or(rest.len());
    let mut out = rest[start..].join("\n");
    if program.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// `text` with every run of whitespace made one space.
pub fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn parses(code: &str) -> Result<(), ReplyError> {
    parse_module(&SourceFile::new(code))
        .map(|_| ())
        .map_err(|e| ReplyError::NotPython {
            line: e.line,
            message: e.message,
        })
}

/// The first JSON object in `text`: the whole text, a fenced block, or the outermost braces.
fn json_object(text: &str) -> Option<Value> {
    let text = text.trim();
    if let Ok(v @ Value::Object(_)) = serde_json::from_str::<Value>(text) {
        return Some(v);
    }
    let start = text.find('{')?;
    let end = text.rfind('}')?;
    let body = text.get(start..=end)?;
    match serde_json::from_str::<Value>(body) {
        Ok(v @ Value::Object(_)) => Some(v),
        _ => None,
    }
}

/// How many times a raising prefix statement is taken out before the prefix is given up on.
const CLEANUP_ROUNDS: usize = 10;

/// Run `prefix`; while the prefix itself raises, drop the statement that raised and run again.
pub(super) fn run_with_cleanup(
    runner: &crate::run::Runner,
    snippet: &crate::exec::Snippet,
    prefix: &Prefix,
    options: &crate::exec::ExecOptions,
) -> Result<(Prefix, Vec<String>, crate::exec::coverage::Execution), crate::exec::ExecError> {
    let mut prefix = prefix.clone();
    let mut removed = Vec::new();
    let mut round = 0;
    loop {
        let execution = crate::exec::coverage::execute(
            runner,
            &snippet.text,
            &snippet.statements,
            &prefix.code,
            options.allow_missing,
        )?;
        let taken_out = match &execution.ending {
            crate::exec::coverage::Ending::PrefixError {
                line: Some(line), ..
            } if round < CLEANUP_ROUNDS => prefix.without_line(*line),
            _ => None,
        };
        let Some((rest, statement)) = taken_out else {
            return Ok((prefix, removed, execution));
        };
        removed.push(statement);
        prefix = rest;
        round += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_becomes_imports_then_initialisations() {
        let reply = r#"{"imports": ["import os"], "initialization": ["x = 1", "def f(a):\n    return a + 1"]}"#;
        let (prefix, dropped) = Prefix::from_reply(reply, &[]).expect("reads");
        assert_eq!(prefix.code, "import os\nx = 1\ndef f(a):\n    return a + 1");
        assert!(dropped.is_empty());
        let back = prefix.as_reply();
        assert_eq!(back.imports, ["import os"]);
        assert_eq!(
            back.initialization,
            ["x = 1", "def f(a):\n    return a + 1"]
        );
    }

    #[test]
    fn lenient_reading() {
        // Prose around the object, an indented entry, a string in place of a list.
        let reply =
            "Here:\n```json\n{\"imports\": \"re\", \"initialization\": [\"    y = 2\"]}\n```";
        let (prefix, _) = Prefix::from_reply(reply, &[]).expect("reads");
        assert_eq!(prefix.code, "import re\ny = 2");
        // One broken entry is dropped, the rest kept.
        let reply = r#"{"imports": [], "initialization": ["a = 1", "b = (", "c = 3"]}"#;
        let (prefix, dropped) = Prefix::from_reply(reply, &[]).expect("reads");
        assert_eq!(prefix.code, "a = 1\nc = 3");
        assert_eq!(dropped, ["b = ("]);
        assert_eq!(Prefix::from_reply("no json", &[]), Err(ReplyError::NoJson));
        assert_eq!(
            Prefix::from_reply("{\"x\": 1}", &[]),
            Err(ReplyError::NoFields)
        );
    }

    #[test]
    fn entries_keyed_by_name_become_definitions() {
        let reply = r#"{"imports": ["import types"], "initialization": {
            "readings": "load(path)",
            "interval": "interval = 2",
            "load": "def load(p):\n    return [3, 1, 4]",
            "path": "'log.txt'",
            "mode": "mode",
            "cfg": "import types\ntypes.SimpleNamespace(debug=True)"}}"#;
        let names: Vec<String> = ["readings", "interval", "load", "path", "cfg", "mode"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let (prefix, dropped) = Prefix::from_reply(reply, &names).expect("reads");
        assert!(dropped.is_empty());
        assert_eq!(
            prefix.code,
            // `readings` waits for `load` and `path`, which it uses.
            "import types\ninterval = 2\ndef load(p):\n    return [3, 1, 4]\npath = 'log.txt'\n\
             readings = load(path)\nimport types\ncfg = types.SimpleNamespace(debug=True)\n\
             mode = 'mode'"
        );
        let schema = prefix_schema(&["readings".into(), "interval".into()]).schema;
        assert_eq!(
            schema["properties"]["initialization"]["required"],
            serde_json::json!(["readings", "interval"])
        );
        assert_eq!(
            prefix_schema(&[]).schema["properties"]["initialization"]["type"],
            "array"
        );
    }

    #[test]
    fn copies_of_the_snippet_are_taken_out() {
        let snippet: HashSet<String> = ["deltas = []", "deltas.append(r[i + 1] - r[i])"]
            .iter()
            .map(|s| collapse(s))
            .collect();
        let prefix = Prefix::new("r = [1, 2]\ndeltas  =  []\ndeltas.append(r[i + 1] - r[i])");
        let (rest, copies) = prefix.without_copies(&snippet);
        assert_eq!(rest.code, "r = [1, 2]");
        assert_eq!(copies.len(), 2);
    }

    #[test]
    fn a_copy_of_the_prefix_at_the_start_of_a_program_is_dropped() {
        let prefix = "import sys\nreadings = [10, 20]\ninterval = 10";
        let program = "import sys\nreadings = [10, 20]\ninterval = 10\n\n# note\nx = 1\nreadings = [10, 20]\n";
        assert_eq!(
            without_prefix_copy(program, prefix),
            "# note\nx = 1\nreadings = [10, 20]\n"
        );
        assert_eq!(without_prefix_copy("x = 1\n", prefix), "x = 1\n");
        assert_eq!(without_prefix_copy("def f(:\n", prefix), "def f(:\n");
    }

    #[test]
    fn the_statement_holding_a_line_is_removed() {
        let prefix = Prefix::new("import os\nclass A:\n    v = 1\nx = A()");
        let (rest, removed) = prefix.without_line(3).expect("found");
        assert_eq!(rest.code, "import os\nx = A()");
        assert_eq!(removed, "class A:\n    v = 1");
        assert!(prefix.without_line(9).is_none());
    }
}
