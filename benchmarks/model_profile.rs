//! Where the embedded model's time goes in real use: `cargo bench --bench model_profile -- CALLS`
//! replays recorded model calls, in the order they were made, through the embedded model and
//! splits the time into prompt evaluation, forward passes and sampling (grammar included) of
//! the generation, and what is left (tokenising, the chat template, the channel to the model's
//! thread). It prints one markdown table per setting, a row per kind of call.
//!
//! CALLS is a response-cache directory written by a real run with `--cache-dir CALLS` (for
//! example `ldb eval … --cache-dir CALLS` or `ldb fix … --cache-dir CALLS`); each entry holds its
//! request, and the files' modification times give the order. Options (after `--`):
//! `--model NAME` (default qwen2.5-coder-1.5b), `--threads N` (default 2), `--draft A,B,…`
//! (settings of prompt-lookup drafting to compare; default `0`: plain generation), `--limit N`
//! (the first N calls), `--llama-bench PATH` (llama.cpp's own `llama-bench`, run on the same
//! model and threads for its prompt and generation speed).

use std::collections::BTreeMap;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Instant, SystemTime};

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;

use ldb::generate::local::catalog;
use ldb::generate::local::llama::{CallStats, LocalModel, LocalOptions};
use ldb::generate::model::{ChatModel, ChatRequest};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|a| a == "--bare") {
        // Child: llama.cpp alone (the backend can be initialised once per process).
        let (Some(path), Some(threads)) = (args.get(1), args.get(2).and_then(|t| t.parse().ok()))
        else {
            std::process::exit(2);
        };
        match bare_speed(Path::new(path), threads) {
            Ok((pp, tg)) => println!("{pp:.1} {tg:.1}"),
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1);
            }
        }
        return;
    }
    if args.first().is_some_and(|a| a == "--bare-parallel") {
        // Child: several sequences decoded together by llama.cpp alone.
        let (Some(path), Some(threads)) = (args.get(1), args.get(2).and_then(|t| t.parse().ok()))
        else {
            std::process::exit(2);
        };
        match parallel_speed(Path::new(path), threads) {
            Ok(speeds) => {
                for (n, tg) in speeds {
                    println!("{n} {tg:.1}");
                }
            }
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1);
            }
        }
        return;
    }
    let opt = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    // The one argument that is neither an option nor an option's value.
    let takes_value = [
        "--model",
        "--threads",
        "--draft",
        "--prompt-chunk",
        "--limit",
        "--llama-bench",
    ];
    if args.iter().any(|a| a == "--parallel") {
        let model_name = opt("--model").unwrap_or_else(|| catalog::DEFAULT_MODEL.to_string());
        let threads: u32 = opt("--threads").and_then(|t| t.parse().ok()).unwrap_or(2);
        match installed(&model_name) {
            Ok(path) => parallel_reference(&path, &model_name, threads),
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1);
            }
        }
        return;
    }
    let Some(calls_dir) = args
        .iter()
        .enumerate()
        .find(|(i, a)| {
            !a.starts_with("--") && (*i == 0 || !takes_value.contains(&args[i - 1].as_str()))
        })
        .map(|(_, a)| PathBuf::from(a))
        .filter(|p| p.is_dir())
    else {
        eprintln!("usage: cargo bench --bench model_profile -- CALLS [--model NAME] [--threads N] [--draft 0,8] [--prompt-chunk 32,128] [--limit N] [--llama-bench PATH]");
        eprintln!("hint: CALLS is a directory written with `--cache-dir CALLS` by `ldb eval` or `ldb fix`");
        std::process::exit(2);
    };
    let model_name = opt("--model").unwrap_or_else(|| catalog::DEFAULT_MODEL.to_string());
    let threads: u32 = opt("--threads").and_then(|t| t.parse().ok()).unwrap_or(2);
    let drafts: Vec<usize> = opt("--draft")
        .map(|d| d.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![0]);
    let default_chunk = LocalOptions::default().prompt_chunk;
    let chunks: Vec<usize> = opt("--prompt-chunk")
        .map(|d| d.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![default_chunk]);
    let limit: usize = opt("--limit")
        .and_then(|t| t.parse().ok())
        .unwrap_or(usize::MAX);

    let requests = match read_calls(&calls_dir) {
        Ok(r) => r.into_iter().take(limit).collect::<Vec<_>>(),
        Err(e) => {
            eprintln!("cannot read the calls in {}: {e}", calls_dir.display());
            std::process::exit(1);
        }
    };
    if requests.is_empty() {
        eprintln!("no recorded calls in {}", calls_dir.display());
        std::process::exit(1);
    }
    let Some(spec) = catalog::find(&model_name) else {
        eprintln!("unknown model {model_name}");
        std::process::exit(2);
    };
    let Some(path) = catalog::verified_path(&spec, &catalog::models_dir()) else {
        eprintln!("model {model_name} is not installed\nhint: ldb model pull {model_name}");
        std::process::exit(1);
    };
    println!("## Model time, replayed");
    println!();
    println!(
        "{} calls from `{}`, {model_name}, {threads} threads. Command: `cargo bench --bench model_profile -- {} --threads {threads} --draft {} --prompt-chunk {}`",
        requests.len(),
        calls_dir.display(),
        calls_dir.display(),
        drafts
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(","),
        chunks
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(",")
    );
    bare_reference(&path, threads);
    if let Some(bench) = opt("--llama-bench") {
        llama_bench(&bench, &path, threads);
    }
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("no runtime: {e}");
            std::process::exit(1);
        }
    };
    let settings: Vec<(usize, usize)> = drafts
        .iter()
        .flat_map(|&d| chunks.iter().map(move |&c| (d, c)))
        .collect();
    for (draft, chunk) in settings {
        let options = LocalOptions {
            threads: Some(threads),
            draft_max: draft,
            prompt_chunk: chunk,
            ..LocalOptions::default()
        };
        let model = match LocalModel::load(&path, &model_name, options) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("cannot load {model_name}: {e}");
                std::process::exit(1);
            }
        };
        let mut rows: BTreeMap<&'static str, Row> = BTreeMap::new();
        let mut replies = Vec::new();
        for (i, request) in requests.iter().enumerate() {
            let started = Instant::now();
            let reply = rt.block_on(model.chat(request));
            let wall = started.elapsed().as_secs_f64();
            let stats = model.last_stats();
            match reply {
                Ok(r) => replies.push(r.content),
                Err(e) => {
                    eprintln!("call {i} failed: {e}");
                    continue;
                }
            }
            for kind in [kind_of(request), "all"] {
                rows.entry(kind).or_default().add(&stats, wall);
            }
            if (i + 1) % 25 == 0 {
                eprintln!("draft {draft}: {} of {} calls", i + 1, requests.len());
            }
        }
        println!();
        println!(
            "### Drafting {}, prompts in chunks of {}",
            if draft == 0 {
                "off".to_string()
            } else {
                format!("up to {draft} tokens")
            },
            if chunk == 0 {
                "any size (--prompt-chunk 0)".to_string()
            } else {
                format!("{chunk} tokens")
            }
        );
        println!();
        println!("| calls | n | prompt tokens evaluated (reused) | prompt s | prompt tok/s | generated | generation s | gen tok/s | forward passes s | sampling s | grammar full passes | drafts kept | other s | wall s |");
        println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
        for (kind, r) in &rows {
            println!("{}", r.line(kind));
        }
        let digest = replies.iter().map(|r| r.len()).sum::<usize>();
        println!();
        println!("Reply bytes in all: {digest} (the same for every drafting setting when drafting changes no token; a prompt chunk of another size rounds the logits otherwise, so it may draw other tokens).");
    }
}

/// A response-cache directory's requests, oldest first.
fn read_calls(dir: &Path) -> std::io::Result<Vec<ChatRequest>> {
    let mut entries: Vec<(SystemTime, ChatRequest)> = Vec::new();
    for sub in std::fs::read_dir(dir)? {
        let sub = sub?.path();
        if !sub.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&sub)? {
            let file = file?.path();
            if file.extension().is_none_or(|e| e != "json") {
                continue;
            }
            let modified = std::fs::metadata(&file)?.modified()?;
            let text = std::fs::read_to_string(&file)?;
            let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) else {
                eprintln!("skipping {}: not JSON", file.display());
                continue;
            };
            match value
                .get("request")
                .cloned()
                .map(serde_json::from_value::<ChatRequest>)
            {
                Some(Ok(r)) => entries.push((modified, r)),
                _ => eprintln!("skipping {}: no request", file.display()),
            }
        }
    }
    entries.sort_by_key(|(t, _)| *t);
    Ok(entries.into_iter().map(|(_, r)| r).collect())
}

/// What a call asks for, by the request's shape.
fn kind_of(r: &ChatRequest) -> &'static str {
    if r.raw_prompt.is_some() {
        "patch (fill in the middle)"
    } else if r.json_schema.is_some() {
        "verdicts (grammar)"
    } else if r.temperature.is_some_and(|t| t > 0.0) {
        "sampled program"
    } else {
        "greedy program"
    }
}

#[derive(Default)]
struct Row {
    n: usize,
    evaluated: usize,
    reused: usize,
    prompt_secs: f64,
    generated: usize,
    generation_secs: f64,
    decode_secs: f64,
    sample_secs: f64,
    grammar_full: usize,
    drafted: usize,
    accepted: usize,
    wall: f64,
}

impl Row {
    fn add(&mut self, s: &CallStats, wall: f64) {
        self.n += 1;
        self.evaluated += s.evaluated_tokens;
        self.reused += s.reused_tokens;
        self.prompt_secs += s.prompt_secs;
        self.generated += s.generated_tokens;
        self.generation_secs += s.generation_secs;
        self.decode_secs += s.decode_secs;
        self.sample_secs += s.sample_secs;
        self.grammar_full += s.grammar_full_passes;
        self.drafted += s.drafted_tokens;
        self.accepted += s.accepted_tokens;
        self.wall += wall;
    }

    fn line(&self, kind: &str) -> String {
        let rate = |n: usize, s: f64| if s > 0.0 { n as f64 / s } else { 0.0 };
        let kept = if self.drafted > 0 {
            format!(
                "{} of {} ({:.0}%)",
                self.accepted,
                self.drafted,
                100.0 * self.accepted as f64 / self.drafted as f64
            )
        } else {
            "-".into()
        };
        format!(
            "| {kind} | {} | {} ({}) | {:.1} | {:.0} | {} | {:.1} | {:.1} | {:.1} | {:.2} | {} | {kept} | {:.1} | {:.1} |",
            self.n,
            self.evaluated,
            self.reused,
            self.prompt_secs,
            rate(self.evaluated, self.prompt_secs),
            self.generated,
            self.generation_secs,
            rate(self.generated, self.generation_secs),
            self.decode_secs,
            self.sample_secs,
            self.grammar_full,
            self.wall - self.prompt_secs - self.generation_secs,
            self.wall,
        )
    }
}

/// llama.cpp's own figures for the same model and threads.
fn llama_bench(bench: &str, model: &Path, threads: u32) {
    println!();
    println!("llama.cpp's `llama-bench` on the same model, {threads} threads:");
    println!();
    match Command::new(bench)
        .arg("-m")
        .arg(model)
        .args([
            "-t",
            &threads.to_string(),
            "-p",
            "512",
            "-n",
            "128",
            "-o",
            "md",
        ])
        .output()
    {
        Ok(o) if o.status.success() => print!("{}", String::from_utf8_lossy(&o.stdout)),
        Ok(o) => eprintln!("llama-bench failed: {}", String::from_utf8_lossy(&o.stderr)),
        Err(e) => eprintln!("cannot run {bench}: {e}"),
    }
}

/// llama.cpp's own speed for the model and threads, measured as `llama-bench` does (a batch of
/// 512 tokens; 128 tokens decoded one at a time, nothing sampled) in a child process with nothing
/// of ldb between the C API and the numbers.
fn bare_reference(model: &Path, threads: u32) {
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("model_profile"));
    let out = Command::new(exe)
        .arg("--bare")
        .arg(model)
        .arg(threads.to_string())
        .output();
    println!();
    match out {
        Ok(o) if o.status.success() => {
            let text = String::from_utf8_lossy(&o.stdout);
            let mut f = text.split_whitespace();
            println!(
                "llama.cpp alone (its C API, llama-bench's method, {threads} threads, mean of 3): prompt {} tok/s (pp512), generation {} tok/s (tg128).",
                f.next().unwrap_or("?"),
                f.next().unwrap_or("?")
            );
        }
        Ok(o) => eprintln!(
            "the reference run failed: {}",
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => eprintln!("cannot run the reference: {e}"),
    }
}

/// The model file of a catalogue model, or why there is none.
fn installed(model_name: &str) -> Result<PathBuf, String> {
    let spec = catalog::find(model_name).ok_or_else(|| format!("unknown model {model_name}"))?;
    catalog::verified_path(&spec, &catalog::models_dir()).ok_or_else(|| {
        format!("model {model_name} is not installed\nhint: ldb model pull {model_name}")
    })
}

/// Generation with 1 to 4 sequences decoded together, in a child process (llama.cpp alone): what
/// drawing several samples of one prompt at once would make of the generation speed.
fn parallel_reference(model: &Path, model_name: &str, threads: u32) {
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("model_profile"));
    let out = Command::new(exe)
        .arg("--bare-parallel")
        .arg(model)
        .arg(threads.to_string())
        .output();
    match out {
        Ok(o) if o.status.success() => {
            println!("## Sequences decoded together ({model_name}, {threads} threads)");
            println!();
            println!("A 256-token prompt shared by every sequence, then 64 tokens each, one batch a step, mean of 3. Command: `cargo bench --bench model_profile -- --parallel --threads {threads}`");
            println!();
            println!("| sequences | tokens/s, all | tokens/s, each | time of a step against one sequence |");
            println!("|---:|---:|---:|---:|");
            let text = String::from_utf8_lossy(&o.stdout);
            let rows: Vec<(usize, f64)> = text
                .lines()
                .filter_map(|l| {
                    let mut f = l.split_whitespace();
                    Some((f.next()?.parse().ok()?, f.next()?.parse().ok()?))
                })
                .collect();
            let one = rows.first().map(|r| r.1).unwrap_or(f64::NAN);
            for (n, tg) in rows {
                println!(
                    "| {n} | {tg:.1} | {:.1} | {:.2}x |",
                    tg / n as f64,
                    (n as f64 / tg) / (1.0 / one)
                );
            }
        }
        Ok(o) => eprintln!(
            "the parallel run failed: {}",
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => eprintln!("cannot run the parallel measurement: {e}"),
    }
}

/// llama.cpp alone: `path` loaded, and a context of `n_ctx` tokens for up to `n_seq` sequences
/// with `threads` threads, given to `measure`.
fn with_bare_context<T>(
    path: &Path,
    threads: i32,
    n_ctx: u32,
    n_seq: u32,
    measure: impl FnOnce(&LlamaModel, &mut llama_cpp_2::context::LlamaContext<'_>) -> Result<T, String>,
) -> Result<T, String> {
    let backend = LlamaBackend::init().map_err(|e| e.to_string())?;
    let model = LlamaModel::load_from_file(&backend, path, &LlamaModelParams::default())
        .map_err(|e| e.to_string())?;
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(n_ctx))
        .with_n_batch(512)
        .with_n_seq_max(n_seq)
        .with_n_threads(threads)
        .with_n_threads_batch(threads);
    let mut ctx = model
        .new_context(&backend, params)
        .map_err(|e| e.to_string())?;
    measure(&model, &mut ctx)
}

/// For 1 to 4 sequences: tokens a second over `n` sequences that share a 256-token prompt (its
/// cache copied to each) and then decode 64 tokens each, one batch of `n` tokens a step.
fn parallel_speed(path: &Path, threads: i32) -> Result<Vec<(i32, f64)>, String> {
    with_bare_context(path, threads, 4096, 4, |model, ctx| {
        let vocab = model.n_vocab().max(2);
        let token = |i: i32| LlamaToken((i * 7919 + 13) % vocab);
        let (prompt, steps, reps) = (256, 64, 3);
        let mut batch = LlamaBatch::new(512, 4);
        let mut speeds = Vec::new();
        for n in 1..=4 {
            let mut tg = 0.0;
            for rep in 0..=reps {
                ctx.clear_kv_cache();
                batch.clear();
                for i in 0..prompt {
                    batch
                        .add(token(i), i, &[0], i == prompt - 1)
                        .map_err(|e| e.to_string())?;
                }
                ctx.decode(&mut batch).map_err(|e| e.to_string())?;
                for seq in 1..n {
                    ctx.copy_kv_cache_seq(0, seq, None, None)
                        .map_err(|e| e.to_string())?;
                }
                let t = Instant::now();
                for step in 0..steps {
                    batch.clear();
                    for seq in 0..n {
                        batch
                            .add(token(step * 4 + seq), prompt + step, &[seq], true)
                            .map_err(|e| e.to_string())?;
                    }
                    ctx.decode(&mut batch).map_err(|e| e.to_string())?;
                }
                if rep > 0 {
                    tg += f64::from(n * steps) / t.elapsed().as_secs_f64();
                }
            }
            speeds.push((n, tg / f64::from(reps)));
        }
        Ok(speeds)
    })
}

fn bare_speed(path: &Path, threads: i32) -> Result<(f64, f64), String> {
    with_bare_context(path, threads, 2048, 1, |model, ctx| {
        let vocab = model.n_vocab().max(2);
        // Arbitrary tokens, as llama-bench uses: the speed does not depend on them.
        let token = |i: i32| LlamaToken((i * 7919 + 13) % vocab);
        let mut batch = LlamaBatch::new(512, 1);
        let (mut pp, mut tg) = (0.0, 0.0);
        let reps = 3;
        // A warm-up pass first, as llama-bench does.
        for rep in 0..=reps {
            ctx.clear_kv_cache();
            batch.clear();
            for i in 0..512 {
                batch
                    .add(token(i), i, &[0], i == 511)
                    .map_err(|e| e.to_string())?;
            }
            let t = Instant::now();
            ctx.decode(&mut batch).map_err(|e| e.to_string())?;
            let secs = t.elapsed().as_secs_f64();
            ctx.clear_kv_cache();
            let t = Instant::now();
            for i in 0..128 {
                batch.clear();
                batch
                    .add(token(i), i, &[0], true)
                    .map_err(|e| e.to_string())?;
                ctx.decode(&mut batch).map_err(|e| e.to_string())?;
            }
            let gen = t.elapsed().as_secs_f64();
            if rep > 0 {
                pp += 512.0 / secs;
                tg += 128.0 / gen;
            }
        }
        Ok((pp / reps as f64, tg / reps as f64))
    })
}
