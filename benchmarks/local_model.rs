//! Embedded-model benchmark: `cargo bench --bench local_model` prints markdown figures for each
//! catalogue model: load time, prompt and generation speed, peak memory, and what reusing the
//! KV cache of the shared prefix saves on the second call of an LDB iteration.
//!
//! Each model runs in its own child process (this binary re-executed with `--one NAME`) so
//! peak RSS is that model's alone. Missing models are pulled first. Options (after `--`):
//! `--models a,b` (default: both), `--threads N`, `--flash-attention` (llama.cpp's flash
//! attention, off by default: see `LocalOptions::flash_attention`).

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use ldb::generate::local::catalog;
use ldb::generate::local::llama::{LocalModel, LocalOptions};
use ldb::generate::model::{ChatModel, ChatRequest, Message};

/// A debugging prompt of realistic size: task, program, test results and a block trace.
fn debug_prompt() -> Vec<Message> {
    let program = "def sum_evens(xs: list) -> int:\n    total = 0\n    for i in range(1, len(xs)):\n        if xs[i] % 2 == 0:\n            total += xs[i]\n    return total\n";
    let mut trace = String::new();
    for k in 0..10 {
        trace.push_str(&format!(
            "[BLOCK-{k}] in sum_evens\n     3 |     for i in range(1, len(xs)):\n  state before: xs = [2, 2, 5, 8, 10, 12, 14, 16], total = {}, i = {k}\n  state after:  xs = [2, 2, 5, 8, 10, 12, 14, 16], total = {}, i = {}\n",
            k * 2,
            k * 2 + 2,
            k + 1
        ));
    }
    vec![
        Message::system("You are an expert Python programmer. You debug programs by reading what they did at run time."),
        Message::user(format!(
            "# Task\nReturn the sum of the even numbers in xs.\n\n# Program\n```python\n{program}```\n\n# Test results\n- FAIL `assert sum_evens([2, 2, 5]) == 4`: got 2, expected 4\n\n# Execution of a failing test\n{trace}\n# Your job\nFor each block, say whether it is correct. Reply with JSON."
        )),
    ]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let opt = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let threads = opt("--threads").and_then(|t| t.parse().ok());
    let flash = args.iter().any(|a| a == "--flash-attention");
    if let Some(name) = opt("--one") {
        let no_mmap = args.iter().any(|a| a == "--no-mmap");
        if let Err(e) = one(&name, threads, no_mmap, flash) {
            eprintln!("benchmark of {name} failed: {e}");
            std::process::exit(1);
        }
        return;
    }
    let models = opt("--models")
        .map(|m| m.split(',').map(str::to_string).collect::<Vec<_>>())
        .unwrap_or_else(|| vec![catalog::FAST_MODEL.into(), catalog::DEFAULT_MODEL.into()]);
    println!("## Embedded model (llama.cpp, CPU)");
    println!();
    println!(
        "Command: `cargo bench --bench local_model{}`",
        if flash { " -- --flash-attention" } else { "" }
    );
    println!();
    println!("| model | threads | load | prompt tok/s | gen tok/s | peak RSS (mmap) | peak RSS (no mmap) | 2nd call: evaluated tokens | 2nd call: prompt time | without prefix reuse |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("local_model"));
    for name in models {
        let mut row: Option<String> = None;
        for no_mmap in [false, true] {
            let mut cmd = Command::new(&exe);
            cmd.args(["--one", &name]);
            if no_mmap {
                cmd.arg("--no-mmap");
            }
            if let Some(t) = threads {
                cmd.args(["--threads", &t.to_string()]);
            }
            if flash {
                cmd.arg("--flash-attention");
            }
            let out = match cmd.output() {
                Ok(o) if o.status.success() => {
                    String::from_utf8_lossy(&o.stdout).trim().to_string()
                }
                Ok(o) => {
                    eprintln!("{}", String::from_utf8_lossy(&o.stderr));
                    std::process::exit(1);
                }
                Err(e) => {
                    eprintln!("cannot run the child benchmark: {e}");
                    std::process::exit(1);
                }
            };
            row = Some(match row {
                None => out,
                // The no-mmap run only contributes its peak RSS.
                Some(first) => {
                    first.replace("{NO_MMAP_RSS}", out.split('|').nth(6).unwrap_or("?").trim())
                }
            });
        }
        println!("{}", row.unwrap_or_default());
    }
}

fn one(name: &str, threads: Option<u32>, no_mmap: bool, flash: bool) -> Result<(), String> {
    let spec = catalog::find(name).ok_or_else(|| format!("unknown model {name}"))?;
    let dir = catalog::models_dir();
    let path = match catalog::verified_path(&spec, &dir) {
        Some(p) => p,
        None => {
            let status = Command::new(env!("CARGO_BIN_EXE_ldb"))
                .args(["model", "pull", name])
                .status()
                .map_err(|e| e.to_string())?;
            if !status.success() {
                return Err("pull failed".into());
            }
            catalog::verified_path(&spec, &dir).ok_or("model missing after pull")?
        }
    };
    let rt = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let options = |reuse| LocalOptions {
        threads,
        use_mmap: !no_mmap,
        reuse_prefix: reuse,
        flash_attention: flash,
        ..LocalOptions::default()
    };
    let model = LocalModel::load(&path, name, options(true)).map_err(|e| e.to_string())?;
    let load = model.load_secs();

    // First LDB call: the verdict prompt, evaluated from scratch.
    let mut messages = debug_prompt();
    let mut first = ChatRequest::new(messages.clone());
    first.max_tokens = Some(128);
    let reply = rt.block_on(model.chat(&first)).map_err(|e| e.to_string())?;
    let s1 = model.last_stats();
    // Second call of the iteration: the same conversation plus the reply and a new request.
    messages.push(Message::assistant(reply.content));
    messages.push(Message::user(
        "Fix the program. Reply with the complete corrected program in one ```python code block.",
    ));
    let mut second = ChatRequest::new(messages.clone());
    second.max_tokens = Some(8);
    rt.block_on(model.chat(&second))
        .map_err(|e| e.to_string())?;
    let s2 = model.last_stats();
    let rss = peak_rss_mib();
    let threads = model.threads();
    drop(model);

    // The same second call with no reuse (a fresh model evaluates the whole prompt).
    let fresh = LocalModel::load(&path, name, options(false)).map_err(|e| e.to_string())?;
    let t = Instant::now();
    rt.block_on(fresh.chat(&second))
        .map_err(|e| e.to_string())?;
    let s3 = fresh.last_stats();
    let _ = t;
    println!(
        "| {name} | {} | {:.1} s | {:.0} | {:.1} | {} MiB | {{NO_MMAP_RSS}} | {} of {} | {:.2} s | {} tokens, {:.2} s |",
        threads,
        load,
        s1.evaluated_tokens as f64 / s1.prompt_secs.max(1e-9),
        s1.generated_tokens as f64 / s1.generation_secs.max(1e-9),
        rss,
        s2.evaluated_tokens,
        s2.prompt_tokens,
        s2.prompt_secs,
        s3.evaluated_tokens,
        s3.prompt_secs,
    );
    Ok(())
}

/// Peak resident memory of this process (VmHWM), in MiB.
fn peak_rss_mib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map(|kb| kb / 1024)
        .unwrap_or(0)
}
