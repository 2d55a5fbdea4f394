//! The search's settings and the portfolio syntax (`fresh:4,feedback:1`).

use crate::repair::search::{Proposer, SelectRule};

/// Why a portfolio (`fresh:4,feedback:1`) does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PortfolioError {
    #[error("`{0}`: the count after `:` must be a whole number")]
    Count(String),
    #[error("unknown proposer `{0}`; use {names}", names = Proposer::proposable_names())]
    Unknown(String),
    #[error("proposer `{0}` is named twice")]
    Twice(String),
    #[error("the portfolio has no proposer with a count above 0")]
    Empty,
}

/// A rule of the search that can be switched by name (`--rules harden,-value-edits`). Which
/// kinds of code each paid on: benchmarks/experiments/rules-by-set.md.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// [`SearchOptions::harden`].
    Harden,
    /// [`SearchOptions::counter_start`].
    CounterStart,
    /// [`SearchOptions::swapped_inputs`].
    SwappedArgs,
    /// [`SearchOptions::crash_abstains`].
    CrashAbstains,
    /// [`SearchOptions::value_edits`].
    ValueEdits,
    /// [`SearchOptions::none_checks`].
    NoneChecks,
}

impl Rule {
    pub const ALL: [Rule; 6] = [
        Rule::Harden,
        Rule::CounterStart,
        Rule::SwappedArgs,
        Rule::CrashAbstains,
        Rule::ValueEdits,
        Rule::NoneChecks,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Rule::Harden => "harden",
            Rule::CounterStart => "counter-start",
            Rule::SwappedArgs => "swapped-args",
            Rule::CrashAbstains => "crash-abstains",
            Rule::ValueEdits => "value-edits",
            Rule::NoneChecks => "none-checks",
        }
    }

    /// Every rule's name, comma-separated: the list an error shows, kept from [`Rule::ALL`] so
    /// a new rule cannot be left out of it.
    pub fn names() -> String {
        Rule::ALL.map(Rule::name).join(", ")
    }
}

/// Why a rule list (`harden,-value-edits`) does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleListError {
    #[error("unknown rule `{0}`; rules: {names} (`-NAME` turns one off)", names = Rule::names())]
    Unknown(String),
}

/// Settings of the search.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchOptions {
    /// Proposers and how many samples each draws per parent (fresh: per round), in the order
    /// they run.
    pub portfolio: Vec<(Proposer, usize)>,
    /// The user chose the portfolio (`--proposers`): it is kept as given, also for a task no
    /// text describes.
    pub portfolio_given: bool,
    /// Programs carried to the next round.
    pub beam: usize,
    /// Candidates proposed at most (the seed not counted).
    pub max_candidates: usize,
    /// Sampling temperature of the proposals (verdicts stay greedy).
    pub temperature: f32,
    /// After the first candidate that passes the visible tests, propose this many more and
    /// choose among the passing ones by agreement on extra inputs; 0 returns the first.
    pub select: usize,
    /// When the seed already passes the visible tests, draw this many fresh programs and run
    /// them all on extra inputs; the seed is kept unless a heavier group of passing programs
    /// behaves differently (a tie that `tie_votes` do not settle keeps the seed). 0 returns a
    /// passing seed unchecked. Visible tests are few, so a seed can pass them and still be
    /// wrong.
    pub verify: usize,
    /// Extra inputs made for the selection.
    pub extra_inputs: usize,
    /// How the LDB proposer asks for verdicts.
    pub verdicts: crate::generate::reply::VerdictForm,
    /// How the program is chosen among those that pass the visible tests.
    pub select_by: SelectRule,
    /// Draw fresh programs one at a time with the seeds `--strategy resample` uses, in its
    /// order (the j-th fresh sample of a task, from 0, has seed `rng_seed + j`): at equal temperature
    /// the search then sees every program resampling would, and its other proposers and its
    /// choice come on top.
    pub fresh_as_resample: bool,
    /// `mutate`: statements edited per parent, most suspicious first.
    pub locate_top: usize,
    /// `mutate`: edits tried per parent at most.
    pub mutate_limit: usize,
    /// `mutate`: edits in a row (2: when no single edit passes, the edits that got furthest
    /// are edited again).
    pub mutate_depth: usize,
    /// The user chose `mutate_depth`: a project's function keeps it.
    pub mutate_depth_given: bool,
    /// `patch`: statements rewritten per parent, most suspicious first.
    pub patch_top: usize,
    /// `patch`: how the model is asked.
    pub patch_form: crate::repair::search::patch::PatchForm,
    /// Stop drawing votes when the first this many drawn for them all fail the visible tests
    /// (0: draw them all).
    pub vote_patience: usize,
    /// When the votes are in and the two heaviest groups of passing programs weigh the same,
    /// draw up to this many more votes, one at a time, until one group leads (0: the tie goes
    /// to the group found first, the given program's when it passed).
    pub tie_votes: usize,
    /// Stop drawing votes once those still to come cannot change the choice: the heaviest
    /// group outweighs every other group together by more than the votes left (false: draw
    /// them all, for the report's counts).
    pub settle_votes: bool,
    /// After an edit or a fresh program passed the visible tests first, stop drawing votes at
    /// the first one that passes them too: replayed, the later votes rarely changed the choice
    /// for their tokens (benchmarks/experiments/vote-value.md). Off until measured in pairs.
    pub stop_at_passing_vote: bool,
    /// With a backend that draws several samples in one call, ask for them together only for
    /// votes (whose number is known once a program passed); until then one at a time, so a
    /// pass ends the drawing at once. Off: a round's samples in one call.
    pub batch_votes_only: bool,
    /// When the seed passes the visible tests but raises an unexpected error on extra inputs
    /// (always reported), edit it (`mutate`) until it no longer raises there and keeps its
    /// other answers; edits that pass the visible tests get the same check, and one that
    /// fails it is set aside for one that passes it or edited again.
    pub harden: bool,
    /// `mutate`: give a name the function only ever updates (`n += 1`) a start (`n = 0`).
    pub counter_start: bool,
    /// Extra inputs: the visible calls with two arguments of one kind swapped.
    pub swapped_inputs: bool,
    /// Votes: a program that crashed on an input (a raise it did not mean) abstains there and
    /// agrees with a program that answers; otherwise the crash is its answer.
    pub crash_abstains: bool,
    /// `mutate`: edits the failing tests' values guide (literals as the expected value has them,
    /// regex classes, a mock's arguments, call ↔ attribute, `None` guards, a broader `except`).
    pub value_edits: bool,
    /// `mutate`, where a failing test raised on a `None`: a condition first asks that its
    /// operand is not `None` (`if x is not None and len(x) > 0:`).
    pub none_checks: bool,
    /// Seconds the search may run: past it, no more proposals are drawn and what was found is
    /// returned (`None`: no limit).
    pub time_limit: Option<std::time::Duration>,
}

/// What a task no text describes gets by default (a function of a user's project without a
/// docstring): a token budget and a time limit, where the user set none.
pub const UNTOLD_BUDGET_TOKENS: u64 = 3000;
pub const UNTOLD_TIME_LIMIT: std::time::Duration = std::time::Duration::from_secs(120);

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            // Edit the given program first, then write fresh programs: edits pay on benchmark
            // functions, student programs and projects, fresh programs on the first two
            // (benchmarks/experiments/rules-by-set.md). Patches (`patch`) added no fix outside
            // projects for a quarter more tokens; test-feedback and LDB repairs found almost no
            // hidden-passing program with the embedded models. `complete` (functions left
            // unwritten) paid on student programs only (one assignment's prompt,
            // benchmarks/experiments/complete.md): `--proposers mutate,complete:2,fresh:4`.
            portfolio: vec![(Proposer::Mutate, 1), (Proposer::Fresh, 4)],
            portfolio_given: false,
            beam: 2,
            max_candidates: 24,
            temperature: 0.8,
            select: 3,
            // Measured on development sets of seeds that pass the visible tests (never the
            // report set; docs/history.md, "Checking programs that already pass"): with
            // the 1.5B model 3 of 30 wrong seeds were replaced by programs that pass the hidden
            // tests, none of 30 right seeds by one that fails them.
            verify: 4,
            extra_inputs: 12,
            // The first wrong block localised better than a verdict per block with the 0.5B
            // model (44% vs 22% of injected bugs, benchmarks/localise.rs) at a sixth of the
            // tokens.
            verdicts: crate::generate::reply::VerdictForm::Short,
            select_by: SelectRule::Groups,
            // With one request's reply a function of the request alone (the embedded model's
            // chunked prompts), the search then fixes every task resampling fixes with the same
            // draws; its checks come on top (docs/history.md, "The same draws as
            // resampling").
            fresh_as_resample: true,
            locate_top: 8,
            mutate_limit: 400,
            mutate_depth: 2,
            mutate_depth_given: false,
            patch_top: 2,
            patch_form: crate::repair::search::patch::PatchForm::Auto,
            vote_patience: 0,
            // Off: one more vote on a tie paid on 46 HumanEval development tasks (+1) and on
            // nothing else; on the 43 it won one and lost one (benchmarks/experiments/tie-votes.md,
            // rules-by-set.md).
            tie_votes: 0,
            // Lossless: the votes left could not have changed the program returned, so they
            // are not drawn (benchmarks/experiments/settle-votes.md).
            settle_votes: true,
            stop_at_passing_vote: false,
            batch_votes_only: false,
            // The rules below paid on one kind of code only (rules-by-set.md), so they are off
            // and `--rules NAME` turns one on. `harden` (and the rank the visible tests give,
            // which only it uses): student programs, +27 fixed on the Refactory report sample;
            // nothing changed on HumanEval or MBPP, and a project has no call to probe
            // (benchmarks/experiments/harden.md, rank.md).
            harden: false,
            // Refactory development only (+2); 0 held out and on HumanEval
            // (benchmarks/experiments/counter-start.md).
            counter_start: false,
            // HumanEval development only (+1); 0 on the 43 (swapped-arguments.md).
            swapped_inputs: false,
            // One task of the 43; 0 on development tasks and on student programs
            // (crash-no-answer.md).
            crash_abstains: false,
            value_edits: true,
            // BugsInPy luigi:4 only, which the default fixes too since b2290a9 (with the model);
            // it never fires on the failing HumanEval or MBPP GPT-3.5 seeds.
            none_checks: false,
            time_limit: None,
        }
    }
}

impl SearchOptions {
    /// Whether `rule` is on.
    pub fn rule(&self, rule: Rule) -> bool {
        match rule {
            Rule::Harden => self.harden,
            Rule::CounterStart => self.counter_start,
            Rule::SwappedArgs => self.swapped_inputs,
            Rule::CrashAbstains => self.crash_abstains,
            Rule::ValueEdits => self.value_edits,
            Rule::NoneChecks => self.none_checks,
        }
    }

    /// Switches `rule` on or off.
    pub fn set_rule(&mut self, rule: Rule, on: bool) {
        let field = match rule {
            Rule::Harden => &mut self.harden,
            Rule::CounterStart => &mut self.counter_start,
            Rule::SwappedArgs => &mut self.swapped_inputs,
            Rule::CrashAbstains => &mut self.crash_abstains,
            Rule::ValueEdits => &mut self.value_edits,
            Rule::NoneChecks => &mut self.none_checks,
        };
        *field = on;
    }

    /// Parses a rule list such as `harden,-value-edits`: a name turns its rule on, `-NAME` (or
    /// `no-NAME`) off; the rules not named keep their defaults.
    pub fn parse_rules(text: &str) -> Result<Vec<(Rule, bool)>, RuleListError> {
        let mut out = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, on) = match part.strip_prefix('-').or_else(|| part.strip_prefix("no-")) {
                Some(rest) => (rest, false),
                None => (part.strip_prefix('+').unwrap_or(part), true),
            };
            let rule = Rule::ALL
                .into_iter()
                .find(|r| r.name() == name.to_ascii_lowercase())
                .ok_or_else(|| RuleListError::Unknown(part.to_string()))?;
            out.push((rule, on));
        }
        Ok(out)
    }

    /// Parses a portfolio such as `feedback:2,ldb:1,fresh:2` (a name alone means 1).
    pub fn parse_portfolio(text: &str) -> Result<Vec<(Proposer, usize)>, PortfolioError> {
        let mut out: Vec<(Proposer, usize)> = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, k) = match part.split_once(':') {
                Some((n, k)) => {
                    let k: usize = k
                        .trim()
                        .parse()
                        .map_err(|_| PortfolioError::Count(part.to_string()))?;
                    (n.trim(), k)
                }
                None => (part, 1),
            };
            let proposer = Proposer::from_portfolio_name(name)
                .ok_or_else(|| PortfolioError::Unknown(name.to_ascii_lowercase()))?;
            if out.iter().any(|(p, _)| *p == proposer) {
                return Err(PortfolioError::Twice(name.to_string()));
            }
            if k > 0 {
                out.push((proposer, k));
            }
        }
        if out.is_empty() {
            return Err(PortfolioError::Empty);
        }
        Ok(out)
    }

    /// The settings for a task no text describes (only its tests say what the function should
    /// do): nothing can be written afresh, so `fresh` and `complete` give way to repairs of the
    /// given program (`replacement`, when they were all the model did), and no fresh programs
    /// are drawn to confirm a fix (`select`, `verify`).
    pub fn for_untold(&self, replacement: &[(Proposer, usize)]) -> SearchOptions {
        let mut o = self.clone();
        // A project's edits are many and each runs its tests: the model's patches come before
        // the edits of edits, which the next round's beam gets anyway.
        if !o.mutate_depth_given {
            o.mutate_depth = 1;
        }
        if o.portfolio_given {
            o.select = 0;
            o.verify = 0;
            o.time_limit = o.time_limit.or(Some(UNTOLD_TIME_LIMIT));
            return o;
        }
        o.portfolio
            .retain(|(p, _)| !matches!(p, Proposer::Fresh | Proposer::Complete));
        let model = |p: &Proposer| !matches!(p, Proposer::Mutate | Proposer::Seed);
        if !o.portfolio.iter().any(|(p, _)| model(p)) {
            for r in replacement {
                if !o.portfolio.iter().any(|(p, _)| *p == r.0) {
                    o.portfolio.push(*r);
                }
            }
        }
        o.select = 0;
        o.verify = 0;
        o.time_limit = o.time_limit.or(Some(UNTOLD_TIME_LIMIT));
        o
    }

    /// The portfolio in the form [`Self::parse_portfolio`] reads.
    pub fn portfolio_label(&self) -> String {
        self.portfolio
            .iter()
            .map(|(p, k)| format!("{}:{k}", p.name()))
            .collect::<Vec<_>>()
            .join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_lists_switch_rules_by_name() {
        let mut o = SearchOptions::default();
        for rule in Rule::ALL {
            o.set_rule(rule, true);
        }
        for (rule, on) in SearchOptions::parse_rules("-value-edits, no-harden").unwrap() {
            o.set_rule(rule, on);
        }
        assert!(!o.value_edits && !o.harden && o.counter_start && o.rule(Rule::SwappedArgs));
        for (rule, on) in SearchOptions::parse_rules("+harden,value-edits").unwrap() {
            o.set_rule(rule, on);
        }
        assert!(Rule::ALL.into_iter().all(|r| o.rule(r)));
        let err = SearchOptions::parse_rules("rank").unwrap_err();
        assert_eq!(err, RuleListError::Unknown("rank".into()));
        let message = err.to_string();
        assert!(
            Rule::ALL.into_iter().all(|r| message.contains(r.name())),
            "{message}"
        );
    }

    #[test]
    fn portfolios_parse_and_print() {
        let p = SearchOptions::parse_portfolio("feedback:2, ldb, fresh:3").unwrap();
        assert_eq!(
            p,
            vec![
                (Proposer::Feedback, 2),
                (Proposer::Ldb, 1),
                (Proposer::Fresh, 3)
            ]
        );
        let o = SearchOptions {
            portfolio: p,
            ..SearchOptions::default()
        };
        assert_eq!(o.portfolio_label(), "feedback:2,ldb:1,fresh:3");
        let err = SearchOptions::parse_portfolio("Magic:2").unwrap_err();
        assert_eq!(err, PortfolioError::Unknown("magic".into()));
        let message = err.to_string();
        assert!(message.ends_with("feedback or ldb"), "{message}");
        for p in Proposer::PROPOSABLE {
            assert!(message.contains(p.name()), "{message}");
            assert_eq!(
                SearchOptions::parse_portfolio(&p.name().to_uppercase()),
                Ok(vec![(p, 1)])
            );
        }
        assert_eq!(
            SearchOptions::parse_portfolio("tests,trace,resample:2,edits,fim").unwrap(),
            vec![
                (Proposer::Feedback, 1),
                (Proposer::Ldb, 1),
                (Proposer::Fresh, 2),
                (Proposer::Mutate, 1),
                (Proposer::Patch, 1)
            ]
        );
        assert!(SearchOptions::parse_portfolio("seed").is_err());
        assert!(SearchOptions::parse_portfolio("ldb:x").is_err());
        assert!(SearchOptions::parse_portfolio("ldb:0").is_err());
        assert!(SearchOptions::parse_portfolio("ldb,ldb:2").is_err());
    }
}
