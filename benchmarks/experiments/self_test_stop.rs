//! What stopping at the model's own tests saves, replayed from a response cache (`--cache-dir`
//! of a run made before the stop existed): for each program request of the cache, where the
//! embedded backend would now stop (`ldb::generate::model::self_test_reply_end`, the backend's own
//! check, over every line), the share of the reply's generated text after
//! that point, and whether the program read from the cut reply is the one read from the whole
//! reply (`extract_program` + `strip_self_tests`). Sampling is token by token with a seeded
//! sampler, so the cut reply is the whole reply's beginning: the tokens saved are those of the
//! text cut, estimated from the reply's own characters per token.
//!
//! Usage: cargo run --release --example self_test_stop -- CACHE_DIR...
use std::path::Path;

use ldb::generate::model::self_test_reply_end;
use ldb::generate::reply::code::extract_program;
use ldb::python::self_tests::strip_self_tests;

#[derive(Default)]
struct Tally {
    calls: usize,
    cut: usize,
    tokens: f64,
    saved: f64,
    same: usize,
    differ: Vec<String>,
}

fn visit(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            visit(&p, out);
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
}

/// The byte offset where the backend would stop in `generated` (the text after the prefix):
/// the backend's own check, over every line the model wrote.
fn cut_at(prefix: &str, generated: &str, entry: &str) -> Option<usize> {
    let text = format!("{prefix}{generated}");
    self_test_reply_end(text.as_bytes(), generated.len(), prefix.len(), entry)
        .map(|keep| keep - prefix.len())
}

fn main() {
    let mut files = Vec::new();
    for dir in std::env::args().skip(1) {
        visit(Path::new(&dir), &mut files);
    }
    files.sort();
    let mut t = Tally::default();
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
            continue;
        };
        let req = &v["request"];
        let Some(needle) = req["stop_after_code"].as_str() else {
            continue;
        };
        let Some(entry) = needle
            .strip_prefix("def ")
            .and_then(|n| n.strip_suffix('('))
            .filter(|e| !e.contains('.'))
        else {
            continue;
        };
        let content = v["response"]["content"].as_str().unwrap_or_default();
        let prefix = req["reply_prefix"].as_str().unwrap_or_default();
        let Some(generated) = content.strip_prefix(prefix) else {
            continue;
        };
        let tokens = v["response"]["usage"]["completion_tokens"]
            .as_f64()
            .unwrap_or_default();
        t.calls += 1;
        t.tokens += tokens;
        let Some(at) = cut_at(prefix, generated, entry) else {
            t.same += 1;
            continue;
        };
        t.cut += 1;
        let share = (generated.len() - at) as f64 / generated.len().max(1) as f64;
        t.saved += tokens * share;
        let cut = format!("{prefix}{}```\n", &generated[..at]);
        let read = |reply: &str| {
            extract_program(reply, Some(entry))
                .ok()
                .map(|found| strip_self_tests(&found.code, entry))
        };
        if read(content) == read(&cut) {
            t.same += 1;
        } else {
            t.differ.push(f.display().to_string());
        }
    }
    println!(
        "program requests {}, stopped early {}, same program {} of {}",
        t.calls, t.cut, t.same, t.calls
    );
    println!(
        "completion tokens {:.0}, saved about {:.0} ({:.1}%)",
        t.tokens,
        t.saved,
        100.0 * t.saved / t.tokens.max(1.0)
    );
    for d in &t.differ {
        println!("differs: {d}");
    }
}
