//! Predict mode (ORCA): one prompt shows the CFG (block ids and statements as `ldb cfg` numbers
//! them) and asks the model to walk it block by block, keeping a symbol table, pausing at each
//! condition to decide the edge, and stopping at the first error or at the end. The reply is
//! constrained to a JSON schema (block ids and error classes as enums, the line as one of the
//! program's statement lines), which a local model gets as a grammar, so it always parses; a
//! reply cut short by the token limit is read as far as it goes.
//!
//! The same prompt continues a real run that stopped where it could not go on (hybrid mode):
//! the executed blocks and the variables at the stop are given, and the model goes on from there.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::cfg_text;
use super::exec::Prepared;
use super::{
    block_label, BlockStep, CheckError, CheckOptions, CheckReport, Mode, Program, RuntimeErrorKind,
    Source, VarState,
};
use crate::generate::model::{ChatModel, ChatRequest, JsonSchema, Message, Usage};
use crate::generate::prompts::Prompts;

/// Where a real run stopped, for a prediction that continues it.
#[derive(Debug, Clone)]
pub struct Continuation {
    /// The blocks the run executed (the stop block's partial visit, if any, last).
    pub executed: Vec<BlockStep>,
    pub stop_scope: usize,
    pub stop_block: usize,
    pub stop_line: u32,
    /// Variables just before the statement at `stop_line`.
    pub state: Vec<VarState>,
    /// Why the run could not go on, as a clause ("`np` is not defined: ...").
    pub reason: String,
}

/// What the model's reply said, after validation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Predicted {
    /// (scope, block, changes, note) per step, unknown blocks dropped.
    pub steps: Vec<(usize, usize, Vec<String>, String)>,
    pub verdict: Option<Verdict>,
    /// Steps naming no block of the program.
    pub dropped: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub error: bool,
    pub class: Option<RuntimeErrorKind>,
    pub line: Option<u32>,
    pub message: String,
}

/// The reply schema. The trace is a chain of steps, each naming its block and then the next
/// step, and each block's `then` admits only the blocks its CFG edges lead to (plus `<end>` where
/// an edge leaves the code, and `<error>` anywhere): a reply can only walk real paths, starting
/// at `start`. Error classes and lines are closed lists too. Calls are evaluated inside the
/// calling block, so a walk stays in one scope.
pub fn reply_schema(program: &Program, start: (usize, usize)) -> Value {
    let cfg = &program.cfg;
    let def_name = |scope: usize, block: usize| format!("s{scope}b{block}");
    let mut defs = serde_json::Map::new();
    for (si, scope) in cfg.scopes.iter().enumerate() {
        let exit = scope.exit_number();
        for block in scope.graph.node_weights() {
            if block.kind != crate::python::cfg::BlockKind::Code {
                continue;
            }
            let mut next: Vec<Value> = Vec::new();
            let mut ends = false;
            let mut seen = Vec::new();
            for (to, _) in scope.successors(block.number) {
                if to == exit {
                    ends = true;
                } else if !seen.contains(&to) {
                    seen.push(to);
                    next.push(json!({"$ref": format!("#/$defs/{}", def_name(si, to))}));
                }
            }
            if ends || scope.successors(block.number).is_empty() {
                next.push(json!({"const": "<end>"}));
            }
            next.push(json!({"const": "<error>"}));
            // Keys in alphabetical order, the order the reply is written in: what the block
            // did, then the condition, then where it goes.
            defs.insert(
                def_name(si, block.number),
                json!({
                    "type": "object",
                    "properties": {
                        "block": {"const": block_label(cfg, si, block.number)},
                        "changes": {"type": "array", "items": {"type": "string"}},
                        "cond": {"type": "string"},
                        "then": {"anyOf": next}
                    },
                    "required": ["block", "changes", "cond", "then"],
                    "additionalProperties": false
                }),
            );
        }
    }
    let mut classes: Vec<&str> = vec!["none"];
    classes.extend(RuntimeErrorKind::ALL.iter().map(|c| c.name()));
    let mut lines: Vec<u32> = vec![0];
    for scope in &cfg.scopes {
        for block in scope.graph.node_weights() {
            lines.extend(block.stmts.iter().map(|s| s.first));
        }
    }
    lines.sort_unstable();
    lines.dedup();
    json!({
        "$defs": defs,
        "type": "object",
        "properties": {
            "trace": {"$ref": format!("#/$defs/{}", def_name(start.0, start.1))},
            "verdict": {
                "type": "object",
                "properties": {
                    "error": {"type": "boolean"},
                    "error_class": {"enum": classes},
                    "line": {"enum": lines},
                    "message": {"type": "string"}
                },
                "required": ["error", "error_class", "line", "message"],
                "additionalProperties": false
            }
        },
        "required": ["trace", "verdict"],
        "additionalProperties": false
    })
}

/// Where a prediction starts: the continued block, or the module's entry.
fn start_of(program: &Program, cont: Option<&Continuation>) -> (usize, usize) {
    match cont {
        Some(c) => (c.stop_scope, c.stop_block),
        None => (0, program.cfg.scopes.first().map_or(0, |s| s.entry.index())),
    }
}

/// Render the prompt (system, user) for `program`.
pub fn prompt(
    prompts: &Prompts,
    program: &Program,
    prepared: &Prepared,
    options: &CheckOptions,
    cont: Option<&Continuation>,
) -> Result<(String, String), CheckError> {
    let system = prompts.render("check_system", json!({}))?;
    let (scope, block) = start_of(program, cont);
    let start_block = block_label(&program.cfg, scope, block);
    let executed: Vec<&str> = cont
        .map(|c| c.executed.iter().map(|s| s.block.as_str()).collect())
        .unwrap_or_default();
    let user = prompts.render(
        "check_predict",
        json!({
            "cfg": cfg_text::render(&program.cfg, &program.source),
            "stdin": options.stdin,
            "input_desc": options.input_desc,
            "reads_input": prepared.facts.reads_input(),
            "imports": prepared.imports.iter().map(|i| i.statement.as_str()).collect::<Vec<_>>(),
            "unresolved": prepared.unresolved,
            "continuing": cont.is_some(),
            "executed": executed,
            "stop_line": cont.map(|c| c.stop_line),
            "stop_block": start_block,
            "reason": cont.map(|c| c.reason.as_str()),
            "state": cont.map(|c| c.state.clone()),
            "start_block": start_block,
            "max_steps": options.max_steps,
        }),
    )?;
    Ok((system, user))
}

/// Ask the model and build the report.
pub async fn check(
    model: &dyn ChatModel,
    prompts: &Prompts,
    program: &Program,
    prepared: &Prepared,
    options: &CheckOptions,
    cont: Option<&Continuation>,
) -> Result<CheckReport, CheckError> {
    let (system, user) = prompt(prompts, program, prepared, options, cont)?;
    let mut request = ChatRequest::new(vec![Message::system(system), Message::user(user)]);
    request.max_tokens = Some(options.max_tokens);
    request.json_schema = Some(JsonSchema {
        name: "predicted_run".into(),
        schema: reply_schema(program, start_of(program, cont)),
    });
    let response = model.chat(&request).await?;
    let mut predicted = parse_reply(program, &response.content);
    predicted.steps.truncate(options.max_steps);
    let mut report = report(
        program,
        prepared,
        &predicted,
        cont,
        Mode::Predict,
        response.usage,
    );
    report.model_reply = Some(response.content);
    Ok(report)
}

/// Read a reply: strict JSON, or JSON cut short (closed as far as it goes), or model-style JSON.
pub fn parse_reply(program: &Program, reply: &str) -> Predicted {
    let start = reply.find('{').unwrap_or(reply.len());
    let body = reply.get(start..).unwrap_or("");
    let value = serde_json::from_str::<Value>(body)
        .ok()
        .or_else(|| crate::generate::reply::json::lenient_json(body).ok())
        .unwrap_or(Value::Null);
    let mut out = Predicted::default();
    // The chain the schema asks for; a flat list from a backend that ignored the schema.
    let mut steps: Vec<&Value> = Vec::new();
    match value.get("trace") {
        Some(Value::Array(items)) => steps.extend(items),
        Some(first @ Value::Object(_)) => {
            let mut node = Some(first);
            while let Some(step) = node.filter(|n| n.is_object()) {
                steps.push(step);
                node = step.get("then");
            }
        }
        _ => {}
    }
    {
        for step in steps {
            let label = step.get("block").and_then(Value::as_str).unwrap_or("");
            let Some((scope, block)) = cfg_text::parse_label(&program.cfg, label) else {
                out.dropped += 1;
                continue;
            };
            let changes = step
                .get("changes")
                .and_then(Value::as_array)
                .map(|c| {
                    c.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            let note = step
                .get("cond")
                .or_else(|| step.get("note"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            out.steps.push((scope, block, changes, note));
        }
    }
    if let Some(v) = value.get("verdict").filter(|v| v.is_object()) {
        let error = v.get("error").and_then(Value::as_bool);
        let class = v
            .get("error_class")
            .and_then(Value::as_str)
            .and_then(RuntimeErrorKind::from_name);
        if let Some(error) = error {
            out.verdict = Some(Verdict {
                error,
                class: if error {
                    class.or(Some(RuntimeErrorKind::Other))
                } else {
                    None
                },
                line: v
                    .get("line")
                    .and_then(Value::as_u64)
                    .and_then(|l| u32::try_from(l).ok())
                    .filter(|&l| l > 0),
                message: v
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
            });
        }
    }
    out
}

/// `name = value` from a symbol-table entry; `None` for anything else.
fn assignment(change: &str) -> Option<(String, String)> {
    let (name, value) = change.split_once('=')?;
    let name = name.trim();
    let valid = !name.is_empty()
        && name.chars().all(|c| c.is_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    // `a == b` is a comparison, not an assignment.
    (valid && !value.starts_with('=')).then(|| (name.to_string(), value.trim().to_string()))
}

/// The report of a prediction (continuing `cont`'s run when given).
pub fn report(
    program: &Program,
    prepared: &Prepared,
    predicted: &Predicted,
    cont: Option<&Continuation>,
    mode: Mode,
    usage: Usage,
) -> CheckReport {
    let cfg = &program.cfg;
    let mut steps: Vec<BlockStep> = cont.map(|c| c.executed.clone()).unwrap_or_default();
    // The symbol table per scope, seeded with the values where the real run stopped.
    let mut tables: BTreeMap<usize, BTreeMap<String, String>> = BTreeMap::new();
    if let Some(c) = cont {
        tables.insert(
            c.stop_scope,
            c.state
                .iter()
                .map(|v| (v.name.clone(), v.value.clone()))
                .collect(),
        );
    }
    let verdict = predicted.verdict.as_ref();
    let error = verdict.is_some_and(|v| v.error);
    let count = predicted.steps.len();
    for (i, (scope, block, changes, _)) in predicted.steps.iter().enumerate() {
        let table = tables.entry(*scope).or_default();
        for (name, value) in changes.iter().filter_map(|c| assignment(c)) {
            table.insert(name, value);
        }
        let mut lines: Vec<u32> = cfg
            .scopes
            .get(*scope)
            .and_then(|s| s.block(*block))
            .map(|b| b.stmts.iter().map(|s| s.first).collect())
            .unwrap_or_default();
        // A continued block starts at the line where the real run stopped.
        if let Some(c) = cont.filter(|c| i == 0 && c.stop_scope == *scope && c.stop_block == *block)
        {
            lines.retain(|&l| l >= c.stop_line);
        }
        // The failing block ends at the failing line.
        if i + 1 == count && error {
            if let Some(line) = verdict.and_then(|v| v.line).filter(|l| lines.contains(l)) {
                lines.retain(|&l| l <= line);
            }
        }
        steps.push(BlockStep {
            block: block_label(cfg, *scope, *block),
            scope: *scope,
            number: *block,
            lines,
            state: table
                .iter()
                .map(|(name, value)| VarState {
                    name: name.clone(),
                    value: value.clone(),
                })
                .collect(),
            source: Source::Predicted,
        });
    }
    let mut notes = prepared.notes.clone();
    if predicted.dropped > 0 {
        notes.push(format!(
            "{} predicted steps named no block of the program and were dropped",
            predicted.dropped
        ));
    }
    if verdict.is_none() {
        notes.push(
            "the prediction stopped before its verdict (token or step limit): no error is \
             claimed"
                .into(),
        );
    }
    let last_predicted = steps.iter().rev().find(|s| s.source == Source::Predicted);
    let (line, block) = if error {
        let line = verdict
            .and_then(|v| v.line)
            .or_else(|| last_predicted.and_then(|s| s.lines.last().copied()));
        // The block that owns the line, in the scope the trace ended in if it can.
        let scope = last_predicted.map_or(0, |s| s.scope);
        let block = line
            .and_then(|l| {
                cfg.scope_line_owner(scope, l)
                    .map(|o| block_label(cfg, scope, o.block))
                    .or_else(|| {
                        cfg.line_owners()
                            .get(l as usize)
                            .copied()
                            .flatten()
                            .map(|o| block_label(cfg, o.scope, o.block))
                    })
            })
            .or_else(|| last_predicted.map(|s| s.block.clone()));
        (line, block)
    } else {
        (None, None)
    };
    CheckReport {
        file: program.name.clone(),
        mode,
        is_error: error,
        error_class: verdict.and_then(|v| v.class),
        message: verdict.filter(|v| v.error).map(|v| v.message.clone()),
        line,
        block,
        source: Source::Predicted,
        block_trace: steps,
        omitted_steps: 0,
        added_imports: prepared
            .imports
            .iter()
            .map(|i| i.statement.clone())
            .collect(),
        unresolved_names: prepared.unresolved.clone(),
        predicted_because: None,
        notes,
        usage: Some(usage),
        model_reply: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::exec::prepare;

    fn program(code: &str) -> Program {
        Program::new("t.py", code.as_bytes()).unwrap()
    }

    #[test]
    fn a_cut_reply_keeps_its_steps_and_claims_nothing() {
        let p = program("x = '2'\nfor i in range(3):\n    x = x + i\nprint(x)\n");
        let reply = r#"{"trace": [{"block": "B0", "changes": ["x = '2'"], "cond": ""},
            {"block": "B1", "changes": ["i = 0"], "cond": "next item 0"}, {"block": "B9", "chan"#;
        let predicted = parse_reply(&p, reply);
        assert_eq!(predicted.steps.len(), 2);
        assert_eq!(predicted.dropped, 1);
        assert!(predicted.verdict.is_none());
        let r = report(
            &p,
            &prepare(&p, false),
            &predicted,
            None,
            Mode::Predict,
            Usage::default(),
        );
        assert!(!r.is_error);
        assert_eq!(r.line_trace(), [1, 2]);
        assert!(r.notes.iter().any(|n| n.contains("before its verdict")));
    }

    #[test]
    fn the_failing_block_ends_at_the_failing_line() {
        let p = program("a = 1\nb = 'x'\nc = a + b\nprint(c)\n");
        let reply = r#"{"trace": {"block": "B0", "changes": ["a = 1", "b = 'x'", "a == b"], "cond": "int + str", "then": "<error>"},
            "verdict": {"error": true, "error_class": "TypeError", "line": 3, "message": "unsupported operand"}}"#;
        let predicted = parse_reply(&p, reply);
        let r = report(
            &p,
            &prepare(&p, false),
            &predicted,
            None,
            Mode::Predict,
            Usage::default(),
        );
        assert!(r.is_error);
        assert_eq!(r.error_class, Some(RuntimeErrorKind::TypeError));
        assert_eq!((r.line, r.block.as_deref()), (Some(3), Some("B0")));
        assert_eq!(r.line_trace(), [1, 2, 3]);
        let state: Vec<(&str, &str)> = r.block_trace[0]
            .state
            .iter()
            .map(|v| (v.name.as_str(), v.value.as_str()))
            .collect();
        assert_eq!(state, [("a", "1"), ("b", "'x'")]);
        assert_eq!(r.source, Source::Predicted);
    }

    #[test]
    fn the_schema_admits_only_cfg_paths_and_closed_lists() {
        let p = program("n = 2\nwhile n > 0:\n    n -= 1\nprint(f(n))\ndef f(x):\n    return x\n");
        let s = reply_schema(&p, (0, 0));
        assert_eq!(s["properties"]["trace"]["$ref"], "#/$defs/s0b0");
        let defs = &s["$defs"];
        assert_eq!(defs["s0b0"]["properties"]["block"]["const"], "B0");
        // The loop header goes to its body or past the loop, never back to B0.
        assert_eq!(
            defs["s0b1"]["properties"]["then"]["anyOf"],
            json!([{"$ref": "#/$defs/s0b2"}, {"$ref": "#/$defs/s0b3"}, {"const": "<error>"}])
        );
        // The last block may end the run.
        assert_eq!(
            defs["s0b3"]["properties"]["then"]["anyOf"],
            json!([{"const": "<end>"}, {"const": "<error>"}])
        );
        assert_eq!(defs["s1b0"]["properties"]["block"]["const"], "f:B0");
        assert_eq!(
            s["properties"]["verdict"]["properties"]["line"]["enum"],
            json!([0, 1, 2, 3, 4, 5, 6])
        );
        let classes = &s["properties"]["verdict"]["properties"]["error_class"]["enum"];
        assert_eq!(classes[0], "none");
        assert!(classes.as_array().unwrap().contains(&json!("TypeError")));
        // A continuation starts where the run stopped.
        assert_eq!(
            reply_schema(&p, (0, 2))["properties"]["trace"]["$ref"],
            "#/$defs/s0b2"
        );
    }

    #[test]
    fn a_chained_trace_is_read_in_order() {
        let p = program("x = 1\nif x:\n    y = 2\nprint(y)\n");
        let reply = r#"{"trace": {"block": "B0", "changes": ["x = 1"], "cond": "x is 1: True", "then":
            {"block": "B1", "changes": ["y = 2"], "cond": "", "then":
            {"block": "B2", "changes": [], "cond": "", "then": "<end>"}}},
            "verdict": {"error": false, "error_class": "none", "line": 0, "message": ""}}"#;
        let predicted = parse_reply(&p, reply);
        let blocks: Vec<usize> = predicted.steps.iter().map(|s| s.1).collect();
        assert_eq!(blocks, [0, 1, 2]);
        assert_eq!(predicted.verdict.as_ref().map(|v| v.error), Some(false));
    }
}
