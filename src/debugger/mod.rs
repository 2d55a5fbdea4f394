//! The debugger: verdicts about traced blocks, parsed from model replies: a verdict for every
//! block ([`verdicts`], LDB's form) or only the first wrong one ([`first_wrong`]).

pub mod first_wrong;
pub mod json_text;
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
    clap::ValueEnum,
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
