//! The markdown summary of a run: the comparison of strategies, pass@1 by iteration budget and by
//! tokens, the published figures beside ours, and per-task details.

use super::{Summary, TOKEN_STEPS};
use crate::eval::fix::published::Published;

/// The markdown report: a comparison table of every run, then each run's details. `plot` is
/// the chart's path relative to where the markdown goes, when one was written.
/// `published` rows (LDB's own results, re-scored) follow the runs as sanity lines.
pub fn markdown(
    summaries: &[Summary],
    published: &[Published],
    plot: Option<&str>,
    tokens_plot: Option<&str>,
) -> String {
    let mut out = String::from("# ldb eval report\n\n");
    out.push_str(
        "pass@1 on hidden tests. *fixed*: seed fails, final passes; *broken*: the reverse. \
         Means are per debugged task (at least one debugging round).\n\n",
    );
    out.push_str(&comparison_table(summaries, published));
    if let Some(plot) = plot {
        out.push_str(&format!("\n![pass@1 against iteration budget]({plot})\n"));
    }
    out.push_str(&curve_table(summaries));
    out.push_str(&token_table(summaries, tokens_plot));
    for s in summaries {
        out.push_str(&details(s));
    }
    out
}

/// One row per run, then one per published result.
pub fn comparison_table(summaries: &[Summary], published: &[Published]) -> String {
    let mut out = String::from(
        "| run | tasks | pass@1 seed | pass@1 final | Δ | fixed | broken | debugged | iters/debugged | tokens/debugged (prompt + completion) | LLM time | non-LLM time | errors |\n\
         | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for s in summaries {
        out.push_str(&format!(
            "| {} | {} | {:.1} | {:.1} | {:+.1} | {} | {} | {} | {:.2} | {:.0} + {:.0} | {} | {} | {} |\n",
            escape(&s.label),
            s.tasks,
            s.pass1_seed,
            s.pass1_final,
            s.pass1_final - s.pass1_seed,
            s.fixed.len(),
            s.broken.len(),
            s.debugged,
            s.mean_iterations,
            s.mean_prompt_tokens,
            s.mean_completion_tokens,
            duration(s.llm_ms),
            duration(s.non_llm_ms),
            s.errors.values().sum::<usize>(),
        ));
    }
    for p in published {
        let seed = p
            .pass1_seed()
            .map_or_else(|| "–".to_string(), |v| format!("{v:.1}"));
        let delta = p.pass1_seed().map_or_else(
            || "–".to_string(),
            |v| format!("{:+.1}", p.pass1_rescored() - v),
        );
        let counted = |ids: &[String]| {
            if p.seed_solved.is_some() {
                ids.len().to_string()
            } else {
                "–".into()
            }
        };
        out.push_str(&format!(
            "| {} (re-scored; LDB's `is_solved`: {:.1}) | {} | {seed} | {:.1} | {delta} | {} | {} | {} | {:.2} | {:.0} (total) | – | – | – |\n",
            escape(&p.label),
            p.pass1_claimed(),
            p.tasks,
            p.pass1_rescored(),
            counted(&p.fixed),
            counted(&p.broken),
            p.debugged,
            p.mean_iterations,
            p.mean_tokens,
        ));
    }
    let sets: std::collections::BTreeSet<usize> = summaries.iter().map(|s| s.tasks).collect();
    if sets.len() > 1 {
        out.push_str("\nThe runs cover different numbers of tasks: compare pass@1 with care.\n");
    }
    for p in published {
        out.push_str(&published_note(p));
    }
    out
}

/// How LDB's own verdicts compare with ours on the same programs.
pub(super) fn published_note(p: &Published) -> String {
    let mut out = format!(
        "\nSanity line `{}`: LDB marks {}/{} tasks solved ({:.1}%); their final programs pass \
         {}/{} ({:.1}%) of the hidden tests here, run with LDB's harness (program + test).",
        p.file.display(),
        p.claimed_solved,
        p.tasks,
        p.pass1_claimed(),
        p.rescored_solved,
        p.tasks,
        p.pass1_rescored(),
    );
    match p.seed_solved {
        Some(k) => out.push_str(&format!(
            " Their seeds of the same model pass {k}/{} here.",
            p.tasks
        )),
        None => {
            out.push_str(" No seed file of the same model was found, so seed columns are empty.")
        }
    }
    if p.disagreements.is_empty() {
        out.push_str(" Every verdict agrees.\n");
    } else {
        out.push_str(&format!(
            " Verdicts differ on {}: {}.\n",
            p.disagreements.len(),
            id_list(&p.disagreements)
        ));
    }
    out
}

pub(super) fn curve_table(summaries: &[Summary]) -> String {
    let width = summaries.iter().map(|s| s.curve.len()).max().unwrap_or(0);
    if width == 0 {
        return String::new();
    }
    let mut out = String::from("\n## pass@1 by iteration budget\n\n| run |");
    for k in 0..width {
        out.push_str(&format!(" {k} |"));
    }
    out.push_str("\n| --- |");
    out.push_str(&" ---: |".repeat(width));
    out.push('\n');
    for s in summaries {
        out.push_str(&format!("| {} |", escape(&s.label)));
        for k in 0..width {
            match s.curve.get(k) {
                Some(v) => out.push_str(&format!(" {v:.1} |")),
                None => out.push_str(" |"),
            }
        }
        out.push('\n');
    }
    out
}

/// Tasks fixed at a few token budgets, for the runs that record their costs.
pub(super) fn token_table(summaries: &[Summary], plot: Option<&str>) -> String {
    let runs: Vec<&Summary> = summaries
        .iter()
        .filter(|s| !s.token_curve.is_empty())
        .collect();
    let Some(max) = runs.iter().map(|s| s.token_max).max() else {
        return String::new();
    };
    let steps = [
        TOKEN_STEPS / 4,
        TOKEN_STEPS / 2,
        3 * TOKEN_STEPS / 4,
        TOKEN_STEPS,
    ];
    let mut out = String::from("\n## Tasks fixed by tokens spent per task\n\n");
    if let Some(plot) = plot {
        out.push_str(&format!("![tasks fixed against tokens]({plot})\n\n"));
    }
    out.push_str("| run | mean tokens/debugged |");
    for &i in &steps {
        out.push_str(&format!(" ≤ {} |", max * i as u64 / TOKEN_STEPS as u64));
    }
    out.push_str("\n| --- | ---: |");
    out.push_str(&" ---: |".repeat(steps.len()));
    out.push('\n');
    for s in runs {
        out.push_str(&format!("| {} | {:.0} |", escape(&s.label), s.mean_cost));
        for &i in &steps {
            let budget = max * i as u64 / TOKEN_STEPS as u64;
            let at = ((budget * TOKEN_STEPS as u64) / s.token_max.max(1)).min(TOKEN_STEPS as u64);
            let v = s.token_curve.get(at as usize).copied().unwrap_or(f64::NAN);
            out.push_str(&format!(" {v:.0} |"));
        }
        out.push('\n');
    }
    out
}

pub(super) fn details(s: &Summary) -> String {
    let mut out = format!("\n## {}\n\n", escape(&s.label));
    out.push_str(&format!("- file: `{}`\n", s.file.display()));
    out.push_str(&format!(
        "- settings: dataset `{}`, seeds `{}`, generator `{}`, debugger `{}`, max {} iterations\n",
        s.dataset, s.seeds, s.generator, s.debugger, s.max_iters
    ));
    out.push_str(&format!(
        "- pass@1: seed {:.1}% ({}/{}) → final {:.1}% ({}/{}), {:+.1} points\n",
        s.pass1_seed,
        s.seed_passed,
        s.tasks,
        s.pass1_final,
        s.final_passed,
        s.tasks,
        s.pass1_final - s.pass1_seed
    ));
    out.push_str(&format!(
        "- fixed {}: {}\n- broken {}: {}\n",
        s.fixed.len(),
        id_list(&s.fixed),
        s.broken.len(),
        id_list(&s.broken)
    ));
    out.push_str(&format!(
        "- debugged {} tasks: {:.2} iterations and {:.0} + {:.0} tokens (prompt + completion) each on average\n",
        s.debugged, s.mean_iterations, s.mean_prompt_tokens, s.mean_completion_tokens
    ));
    out.push_str(&format!(
        "- time in the loop: LLM {}, non-LLM {}; hidden-test scoring {}\n",
        duration(s.llm_ms),
        duration(s.non_llm_ms),
        duration(s.hidden_ms)
    ));
    if !s.errors.is_empty() {
        let list: Vec<String> = s.errors.iter().map(|(k, v)| format!("{k} {v}")).collect();
        out.push_str(&format!("- errors: {}\n", list.join(", ")));
    }
    if s.scored_on_visible > 0 {
        out.push_str(&format!(
            "- {} tasks have no hidden tests and were scored on their visible tests\n",
            s.scored_on_visible
        ));
    }
    out
}

pub(super) fn id_list(ids: &[String]) -> String {
    if ids.is_empty() {
        return "none".into();
    }
    const SHOWN: usize = 30;
    let mut text = ids
        .iter()
        .take(SHOWN)
        .map(|i| format!("`{i}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if ids.len() > SHOWN {
        text.push_str(&format!(" and {} more", ids.len() - SHOWN));
    }
    text
}

pub(super) fn escape(text: &str) -> String {
    text.replace('|', "\\|")
}

/// `950ms`, `12.3s`, `4m 05s`, `2h 03m`.
pub fn duration(ms: u64) -> String {
    let s = ms / 1000;
    if ms < 1000 {
        format!("{ms}ms")
    } else if s < 60 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else if s < 3600 {
        format!("{}m {:02}s", s / 60, s % 60)
    } else {
        format!("{}h {:02}m", s / 3600, (s % 3600) / 60)
    }
}
