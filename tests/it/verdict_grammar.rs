//! The verdict grammar: for any set of block labels, the schema the debugger is constrained by
//! converts to a llama.cpp grammar that names every label, and every reply the schema admits
//! parses into verdicts on the shown labels. (The real model sampling under the grammar is
//! exercised in `e2e_local.rs`.)

use ldb::generate::reply::verdicts::{parse_verdicts, verdict_schema_for};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use serde_json::{json, Value};

/// Label sets as the trace renders them: BLOCK-n, LINE-n or FUNCTION-name, distinct.
fn labels() -> impl Strategy<Value = Vec<String>> {
    let label = prop_oneof![
        (0u32..400).prop_map(|n| format!("BLOCK-{n}")),
        (1u32..400).prop_map(|n| format!("LINE-{n}")),
        "[a-z_][a-z0-9_]{0,8}".prop_map(|f| format!("FUNCTION-{f}")),
    ];
    prop::collection::vec(label, 1..24).prop_map(|mut v| {
        let mut seen = std::collections::HashSet::new();
        v.retain(|l| seen.insert(l.clone()));
        v
    })
}

/// A reply the schema admits: exactly as many verdicts as labels, each naming one of them
/// (repeats allowed: the schema does not forbid them), any explanation text.
fn admitted(labels: Vec<String>) -> impl Strategy<Value = (Vec<String>, Value)> {
    let n = labels.len();
    let entry = (
        prop::sample::select(labels.clone()),
        any::<bool>(),
        ".{0,60}",
    );
    prop::collection::vec(entry, n..=n).prop_map(move |entries| {
        let verdicts: Vec<Value> = entries
            .into_iter()
            .map(|(block, correct, explanation)| {
                json!({"block": block, "correct": correct, "explanation": explanation})
            })
            .collect();
        (labels.clone(), json!({ "verdicts": verdicts }))
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, failure_persistence: Some(Box::new(FileFailurePersistence::SourceParallel("proptest-regressions"))), ..ProptestConfig::default() })]

    #[test]
    fn the_schema_becomes_a_grammar_naming_every_label(labels in labels()) {
        let schema = verdict_schema_for(&labels);
        let grammar = llama_cpp_2::json_schema_to_grammar(&schema.to_string())
            .map_err(|e| TestCaseError::fail(format!("no grammar: {e}")))?;
        for label in &labels {
            prop_assert!(grammar.contains(label.as_str()), "{label} missing from {grammar}");
        }
    }

    #[test]
    fn every_admitted_reply_parses_into_shown_labels(
        (labels, reply) in labels().prop_flat_map(admitted),
        pretty in any::<bool>(),
    ) {
        let text = if pretty {
            serde_json::to_string_pretty(&reply).unwrap_or_default()
        } else {
            reply.to_string()
        };
        let parsed = parse_verdicts(&text, &labels)
            .map_err(|e| TestCaseError::fail(format!("{e}: {text}")))?;
        prop_assert!(!parsed.verdicts.is_empty());
        prop_assert!(parsed.unknown.is_empty(), "{:?}", parsed.unknown);
        for v in &parsed.verdicts {
            prop_assert!(labels.contains(&v.block), "{} not shown", v.block);
        }
        // Every label the reply named is answered, with the reply's first verdict for it.
        let first = |l: &str| reply["verdicts"].as_array().into_iter().flatten()
            .find(|v| v["block"] == l).map(|v| v["correct"].as_bool());
        for v in &parsed.verdicts {
            prop_assert_eq!(first(&v.block), Some(Some(v.correct)));
        }
    }
}
