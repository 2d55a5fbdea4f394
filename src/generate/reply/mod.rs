//! Reading a model's reply. Small models rarely answer in exactly the form asked for, so every
//! reader here is forgiving and says when it had to be:
//! - [`code`]: the Python program in a reply (fenced, split over blocks, cut short, or bare);
//! - [`json`]: JSON inside prose, strict or written the way small models write it;
//! - the debugger's verdicts about traced blocks: a verdict for every block ([`verdicts`], LDB's
//!   form, with the paper's plain-text format as a fallback) or only the first wrong one
//!   ([`short_verdict`]).

pub mod code;
pub mod json;
pub mod short_verdict;
pub mod verdicts;

/// How verdicts are asked for.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum VerdictForm {
    /// A verdict (correct or not, and why) for every block shown: LDB's form.
    #[default]
    Full,
    /// Only the first wrong block and one sentence.
    Short,
}

impl VerdictForm {
    pub fn name(self) -> &'static str {
        match self {
            VerdictForm::Full => "full",
            VerdictForm::Short => "short",
        }
    }
}
