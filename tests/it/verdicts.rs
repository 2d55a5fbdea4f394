//! Parsing the debugger model's per-block verdicts: the strict form, the many near-misses small
//! models produce, the plain-text fallback, label bookkeeping, the schema, and garbage.

use ldb::generate::reply::verdicts::{
    parse_verdicts, verdict_schema, ParsedVerdicts, Verdict, VerdictError,
};

fn labels(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("BLOCK-{i}")).collect()
}

fn ok(reply: &str, expected: &[String]) -> ParsedVerdicts {
    match parse_verdicts(reply, expected) {
        Ok(parsed) => parsed,
        Err(err) => panic!("expected verdicts, got {err:?} for reply:\n{reply}"),
    }
}

fn v(block: &str, correct: bool, explanation: &str) -> Verdict {
    Verdict {
        block: block.to_string(),
        correct,
        explanation: explanation.to_string(),
    }
}

/// (label, correct) pairs, for compact comparisons.
fn summary(parsed: &ParsedVerdicts) -> Vec<(String, bool)> {
    parsed
        .verdicts
        .iter()
        .map(|v| (v.block.clone(), v.correct))
        .collect()
}

fn pairs(items: &[(&str, bool)]) -> Vec<(String, bool)> {
    items.iter().map(|(l, c)| (l.to_string(), *c)).collect()
}

#[test]
fn strict_object_is_not_lenient() {
    let reply = r#"{"verdicts": [
        {"block": "BLOCK-0", "correct": true, "explanation": "Initialises total to 0."},
        {"block": "BLOCK-1", "correct": false, "explanation": "range starts at 1 and skips xs[0]."}
    ]}"#;
    let parsed = ok(reply, &labels(2));
    assert_eq!(
        parsed.verdicts,
        vec![
            v("BLOCK-0", true, "Initialises total to 0."),
            v("BLOCK-1", false, "range starts at 1 and skips xs[0]."),
        ]
    );
    assert!(parsed.missing.is_empty());
    assert!(parsed.unknown.is_empty());
    assert!(!parsed.lenient);
}

#[test]
fn fenced_json_with_prose_around() {
    let reply = "Let me check each block.\n\n```json\n{\"verdicts\": [{\"block\": \"BLOCK-0\", \"correct\": true, \"explanation\": \"fine\"}]}\n```\n\nSo block 0 is fine, which [surprisingly] means the bug is later.";
    let parsed = ok(reply, &labels(1));
    assert_eq!(parsed.verdicts, vec![v("BLOCK-0", true, "fine")]);
    assert!(!parsed.lenient);
}

#[test]
fn bare_array() {
    let reply = r#"[{"block": "BLOCK-0", "correct": false, "explanation": "x"}]"#;
    let parsed = ok(reply, &labels(1));
    assert_eq!(parsed.verdicts, vec![v("BLOCK-0", false, "x")]);
    assert!(!parsed.lenient);
}

#[test]
fn python_literal_style() {
    let reply = "{'verdicts': [{'block': 'BLOCK-0', 'correct': True, 'explanation': \"it's fine\"}, {'block': 'BLOCK-1', 'correct': False, 'explanation': 'off by one'},]}";
    let parsed = ok(reply, &labels(2));
    assert_eq!(
        parsed.verdicts,
        vec![
            v("BLOCK-0", true, "it's fine"),
            v("BLOCK-1", false, "off by one")
        ]
    );
    assert!(parsed.lenient);
}

#[test]
fn trailing_commas_and_comments() {
    let reply = r#"{
  // one entry per block
  "verdicts": [
    {"block": "BLOCK-0", "correct": true, "explanation": "ok",},  /* first */
    {"block": "BLOCK-1", "correct": false, "explanation": "bad"},  # python-style comment
  ],
}"#;
    let parsed = ok(reply, &labels(2));
    assert_eq!(
        summary(&parsed),
        pairs(&[("BLOCK-0", true), ("BLOCK-1", false)])
    );
    assert!(parsed.lenient);
}

#[test]
fn correct_given_as_words_and_numbers() {
    let cases: [(&str, bool); 12] = [
        ("\"true\"", true),
        ("\"false\"", false),
        ("\"yes\"", true),
        ("\"no\"", false),
        ("\"incorrect\"", false),
        ("\"wrong\"", false),
        ("\"Correct.\"", true),
        ("\"Incorrect - the loop skips 0\"", false),
        ("0", false),
        ("1", true),
        ("\"False\"", false),
        ("\"True\"", true),
    ];
    for (value, expected) in cases {
        let reply = format!(
            r#"{{"verdicts": [{{"block": "BLOCK-0", "correct": {value}, "explanation": "e"}}]}}"#
        );
        let parsed = ok(&reply, &labels(1));
        assert_eq!(parsed.verdicts[0].correct, expected, "{value}");
        assert!(parsed.lenient, "{value}");
    }
}

#[test]
fn block_label_spellings_are_normalised() {
    let expected = labels(8);
    let spellings = [
        "3",
        "\"3\"",
        "\"BLOCK 3\"",
        "\"block-3\"",
        "\"[BLOCK-3]\"",
        "\"Block_3\"",
        "\"block #3\"",
    ];
    for spelling in spellings {
        let reply = format!(r#"[{{"block": {spelling}, "correct": false, "explanation": "e"}}]"#);
        let parsed = ok(&reply, &expected);
        assert_eq!(parsed.verdicts[0].block, "BLOCK-3", "{spelling}");
        assert!(parsed.lenient, "{spelling}");
        assert!(parsed.unknown.is_empty(), "{spelling}");
    }
}

#[test]
fn labels_follow_the_prefix_asked_for() {
    let expected: Vec<String> = (0..3).map(|i| format!("LINE-{i}")).collect();
    let reply = r#"[{"block": 2, "correct": false, "explanation": "e"}, {"block": "line 1", "correct": true, "explanation": ""}]"#;
    let parsed = ok(reply, &expected);
    assert_eq!(
        summary(&parsed),
        pairs(&[("LINE-2", false), ("LINE-1", true)])
    );
    assert_eq!(parsed.missing, vec!["LINE-0".to_string()]);
}

#[test]
fn field_name_variants() {
    let reply = r#"{"verdicts": [
        {"label": "BLOCK-0", "is_correct": true, "reason": "r0"},
        {"id": "BLOCK-1", "correct": false, "explain": "r1"},
        {"block_id": 2, "Correct": "no", "reasoning": "r2"}
    ]}"#;
    let parsed = ok(reply, &labels(3));
    assert_eq!(
        parsed.verdicts,
        vec![
            v("BLOCK-0", true, "r0"),
            v("BLOCK-1", false, "r1"),
            v("BLOCK-2", false, "r2")
        ]
    );
    assert!(parsed.lenient);
}

#[test]
fn missing_explanation_is_empty_and_lenient() {
    let parsed = ok(r#"[{"block": "BLOCK-0", "correct": true}]"#, &labels(1));
    assert_eq!(parsed.verdicts, vec![v("BLOCK-0", true, "")]);
    assert!(parsed.lenient);
}

#[test]
fn missing_and_unknown_labels() {
    let reply = r#"{"verdicts": [
        {"block": "BLOCK-0", "correct": true, "explanation": "a"},
        {"block": "BLOCK-7", "correct": false, "explanation": "b"},
        {"block": "BLOCK-2", "correct": false, "explanation": "c"}
    ]}"#;
    let parsed = ok(reply, &labels(4));
    assert_eq!(
        parsed.missing,
        vec!["BLOCK-1".to_string(), "BLOCK-3".to_string()]
    );
    assert_eq!(parsed.unknown, vec!["BLOCK-7".to_string()]);
    // Unknown labels are still reported among the verdicts, in reply order.
    assert_eq!(parsed.verdicts.len(), 3);
    assert!(!parsed.lenient);
}

#[test]
fn no_expected_labels_means_nothing_missing_or_unknown() {
    let parsed = ok(
        r#"[{"block": 5, "correct": false, "explanation": "e"}]"#,
        &[],
    );
    assert_eq!(parsed.verdicts, vec![v("BLOCK-5", false, "e")]);
    assert!(parsed.missing.is_empty() && parsed.unknown.is_empty());
}

#[test]
fn duplicate_labels_keep_the_first() {
    let reply = r#"[
        {"block": "BLOCK-0", "correct": false, "explanation": "first"},
        {"block": "BLOCK-0", "correct": true, "explanation": "second"}
    ]"#;
    let parsed = ok(reply, &labels(1));
    assert_eq!(parsed.verdicts, vec![v("BLOCK-0", false, "first")]);
    assert!(parsed.lenient);
}

#[test]
fn json_lines_one_object_per_block() {
    let reply = "[BLOCK-0]\n{\"block\": \"BLOCK-0\", \"correct\": true, \"explanation\": \"sets i\"}\n[BLOCK-1]\n{\"block\": \"BLOCK-1\", \"correct\": false, \"explanation\": \"wrong bound\"}\n";
    let parsed = ok(reply, &labels(2));
    assert_eq!(
        summary(&parsed),
        pairs(&[("BLOCK-0", true), ("BLOCK-1", false)])
    );
    assert!(parsed.missing.is_empty());
}

#[test]
fn verdicts_keyed_by_label() {
    let reply = r#"{"BLOCK-0": {"correct": true, "explanation": "a"}, "BLOCK-1": false}"#;
    let parsed = ok(reply, &labels(2));
    assert_eq!(
        parsed.verdicts,
        vec![v("BLOCK-0", true, "a"), v("BLOCK-1", false, "")]
    );
    assert!(parsed.lenient);
}

#[test]
fn unlabelled_list_matching_the_blocks_is_placed_by_position() {
    let reply =
        r#"[{"correct": true, "explanation": "a"}, {"correct": false, "explanation": "b"}]"#;
    let parsed = ok(reply, &labels(2));
    assert_eq!(
        summary(&parsed),
        pairs(&[("BLOCK-0", true), ("BLOCK-1", false)])
    );
    assert!(parsed.lenient);
    // With a different count the position means nothing.
    assert!(parse_verdicts(reply, &labels(3)).is_err());
}

#[test]
fn example_before_the_answer_loses_to_the_fuller_answer() {
    let reply = r#"The format is {"block": "BLOCK-0", "correct": true, "explanation": "..."}.
Here are my verdicts:
{"verdicts": [{"block": "BLOCK-0", "correct": true, "explanation": "init"},
              {"block": "BLOCK-1", "correct": false, "explanation": "bug"}]}"#;
    let parsed = ok(reply, &labels(2));
    assert_eq!(
        summary(&parsed),
        pairs(&[("BLOCK-0", true), ("BLOCK-1", false)])
    );
}

#[test]
fn truncated_json_keeps_complete_entries() {
    let reply = r#"{"verdicts": [{"block": "BLOCK-0", "correct": true, "explanation": "a"}, {"block": "BLOCK-1", "correct": false, "explanation": "b"}, {"block": "BLOCK-2", "corr"#;
    let parsed = ok(reply, &labels(3));
    assert_eq!(
        summary(&parsed),
        pairs(&[("BLOCK-0", true), ("BLOCK-1", false)])
    );
    assert_eq!(parsed.missing, vec!["BLOCK-2".to_string()]);
}

#[test]
fn paper_text_format() {
    let reply = "[BLOCK-0]\nThis block initialises the accumulator. correct: True\nexplanation: total starts at 0 as required.\n\n[BLOCK-1]\n# i = 1, total = 2\ncorrect: False\nexplanation: the loop should start at 0.\n";
    let parsed = ok(reply, &labels(2));
    assert_eq!(
        parsed.verdicts,
        vec![
            v("BLOCK-0", true, "total starts at 0 as required."),
            v("BLOCK-1", false, "the loop should start at 0."),
        ]
    );
    assert!(parsed.lenient);
}

#[test]
fn text_lines_with_verdict_words() {
    let reply = "Analysis:\n- BLOCK-0: correct — sets up the counter.\n- **BLOCK-1**: incorrect — because it compares with <= instead of <.\nBlock 2 is not correct: it returns early.\nBLOCK-3: The condition is wrong for empty lists.\n";
    let parsed = ok(reply, &labels(4));
    assert_eq!(
        summary(&parsed),
        pairs(&[
            ("BLOCK-0", true),
            ("BLOCK-1", false),
            ("BLOCK-2", false),
            ("BLOCK-3", false)
        ])
    );
    assert_eq!(parsed.verdicts[0].explanation, "sets up the counter.");
    assert_eq!(
        parsed.verdicts[1].explanation,
        "because it compares with <= instead of <."
    );
    assert!(parsed.lenient);
}

#[test]
fn no_json_and_no_labels() {
    let err = parse_verdicts("The program looks fine to me.", &labels(2)).unwrap_err();
    assert_eq!(err, VerdictError::NoJson);
    assert!(err.to_string().contains("\"verdicts\""), "{err}");
}

#[test]
fn empty_verdict_list() {
    let err = parse_verdicts(r#"{"verdicts": []}"#, &labels(2)).unwrap_err();
    assert_eq!(err, VerdictError::Empty);
    assert!(!err.to_string().is_empty());
}

#[test]
fn malformed_entries_say_what_is_missing() {
    let err = parse_verdicts(
        r#"{"verdicts": [{"block": "BLOCK-0", "explanation": "no verdict given"}]}"#,
        &labels(1),
    )
    .unwrap_err();
    match &err {
        VerdictError::Malformed { detail } => assert!(detail.contains("correct"), "{detail}"),
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("could not be used"), "{err}");

    let err = parse_verdicts(
        r#"{"verdicts": [{"block": "BLOCK-0", "correct": "maybe"}]}"#,
        &labels(1),
    )
    .unwrap_err();
    assert!(matches!(err, VerdictError::Malformed { .. }), "{err:?}");
}

#[test]
fn schema_snapshot() {
    let schema = verdict_schema();
    insta::assert_json_snapshot!("verdict_schema", schema);
}

#[test]
fn schema_is_strict_and_accepts_exactly_the_reply_shape() {
    let schema = verdict_schema();
    // It survives a round trip through text, as a request body would carry it.
    let text = serde_json::to_string(&schema).unwrap();
    let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], serde_json::json!(["verdicts"]));
    assert_eq!(schema["additionalProperties"], false);
    let item = &schema["properties"]["verdicts"]["items"];
    assert_eq!(item["additionalProperties"], false);
    let mut required: Vec<&str> = item["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    required.sort_unstable();
    assert_eq!(required, ["block", "correct", "explanation"]);
    assert!(
        !text.contains("$ref"),
        "strict mode wants everything inline: {text}"
    );

    let validator = jsonschema::validator_for(&schema).unwrap();
    let good = serde_json::json!({"verdicts": [{"block": "BLOCK-0", "correct": true, "explanation": "x"}]});
    assert!(validator.is_valid(&good));
    let extra = serde_json::json!({"verdicts": [], "note": 1});
    assert!(!validator.is_valid(&extra));
    let missing = serde_json::json!({"verdicts": [{"block": "BLOCK-0", "correct": true}]});
    assert!(!validator.is_valid(&missing));

    // What the schema admits, the parser reads strictly.
    let parsed = parse_verdicts(&good.to_string(), &labels(1)).unwrap();
    assert!(!parsed.lenient);
}

/// Deterministic xorshift generator, so garbage inputs are the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn garbage_never_panics() {
    const PIECES: [&str; 30] = [
        "{",
        "}",
        "[",
        "]",
        "\"",
        "'",
        ":",
        ",",
        "\"block\"",
        "\"correct\"",
        "true",
        "False",
        "BLOCK-",
        "3",
        "[BLOCK-1]",
        "correct: ",
        "incorrect",
        "\\",
        "\\u12",
        "//",
        "/*",
        "#",
        "\n",
        " ",
        "é",
        "👋",
        "```json\n",
        "None",
        "1e999",
        "-",
    ];
    let expected = labels(4);
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    for _ in 0..2000 {
        let mut reply = String::new();
        for _ in 0..rng.below(50) {
            if rng.below(5) == 0 {
                let c = char::from_u32((rng.next() % 0x11_0000) as u32).unwrap_or('?');
                reply.push(c);
            } else {
                reply.push_str(PIECES[rng.below(PIECES.len())]);
            }
        }
        if let Ok(parsed) = parse_verdicts(&reply, &expected) {
            assert!(!parsed.verdicts.is_empty(), "{reply:?}");
        }
        let _ = parse_verdicts(&reply, &[]);
    }
}

#[test]
fn pathological_shapes_never_panic() {
    let shapes = [
        "[".repeat(100_000),
        "{".repeat(100_000),
        "{\"a\":".repeat(50_000),
        "]".repeat(10_000) + &"}".repeat(10_000),
        "'".repeat(10_000),
        "[BLOCK-1]\n".repeat(10_000),
        format!(
            "{{\"verdicts\": [{}",
            "{\"block\": 1, \"correct\": true},".repeat(20_000)
        ),
        "\u{0}\u{fffd}\u{10ffff}".repeat(1000),
        String::new(),
    ];
    for reply in &shapes {
        let _ = parse_verdicts(reply, &labels(3));
    }
    // A large truncated answer still yields its complete entries.
    let parsed = parse_verdicts(&shapes[6], &labels(3)).unwrap();
    assert_eq!(parsed.verdicts.len(), 1);
}
