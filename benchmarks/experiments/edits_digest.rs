//! Every edit `ldb::python::edits::edits` proposes for each program on stdin (JSON lines with
//! `id` and `program`), all lines targeted: one JSON line per program on stdout.
use std::io::BufRead;

fn main() {
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        let (Some(id), Some(program)) = (v["id"].as_str(), v["program"].as_str()) else {
            continue;
        };
        let n = program.lines().count() as u32;
        let targets: Vec<u32> = (1..=n).collect();
        let edits: Vec<String> = ldb::python::edits::edits(program, &targets, 1_000_000)
            .iter()
            .map(|e| format!("{}:{:?}:{}", e.line, e.kind, e.description))
            .collect();
        println!("{}", serde_json::json!({"id": id, "edits": edits}));
    }
}
