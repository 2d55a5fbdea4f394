//! Value parsers for flags whose values clap cannot check alone: a temperature in range, a
//! positive number of seconds, a proposer portfolio. A bad value is refused while the command
//! line is parsed, with clap's `invalid value` message and exit status 2.

use clap::builder::{RangedU64ValueParser, TypedValueParser};

use crate::repair::search::{PortfolioError, Proposer, Rule, RuleListError, SearchOptions};

/// Why a flag's value was refused (clap prints it after `invalid value 'X' for '--flag'`).
#[derive(Debug, thiserror::Error)]
pub enum FlagValueError {
    #[error("`{0}` is not a number")]
    NotANumber(String),
    #[error("{0} is outside 0..=2")]
    Temperature(f32),
    #[error("must be a positive number of seconds, got {0}")]
    Seconds(f64),
    #[error(transparent)]
    Portfolio(#[from] PortfolioError),
    #[error(transparent)]
    Rules(#[from] RuleListError),
}

/// A sampling temperature, 0 to 2 (as OpenAI's API takes it).
pub fn temperature(text: &str) -> Result<f32, FlagValueError> {
    let t: f32 = text
        .trim()
        .parse()
        .map_err(|_| FlagValueError::NotANumber(text.to_string()))?;
    if (0.0..=2.0).contains(&t) {
        Ok(t)
    } else {
        Err(FlagValueError::Temperature(t))
    }
}

/// A positive, finite number of seconds (fractions allowed).
pub fn seconds(text: &str) -> Result<f64, FlagValueError> {
    let s: f64 = text
        .trim()
        .parse()
        .map_err(|_| FlagValueError::NotANumber(text.to_string()))?;
    if s.is_finite() && s > 0.0 {
        Ok(s)
    } else {
        Err(FlagValueError::Seconds(s))
    }
}

/// The search's proposers and their counts (`--proposers fresh:4,feedback:1`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Portfolio(pub Vec<(Proposer, usize)>);

pub fn portfolio(text: &str) -> Result<Portfolio, FlagValueError> {
    Ok(Portfolio(SearchOptions::parse_portfolio(text)?))
}

/// Rules of the search switched by name (`--rules harden,-value-edits`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleList(pub Vec<(Rule, bool)>);

pub fn rules(text: &str) -> Result<RuleList, FlagValueError> {
    Ok(RuleList(SearchOptions::parse_rules(text)?))
}

/// A count of at least 1 (`--concurrency`, `--n`, ...), as a `usize`.
pub fn at_least_one() -> impl TypedValueParser<Value = usize> {
    RangedU64ValueParser::<usize>::new().range(1..)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_in_range_pass_and_others_say_why() {
        assert_eq!(temperature("0.8").ok(), Some(0.8));
        assert_eq!(temperature("0").ok(), Some(0.0));
        assert_eq!(
            temperature("2.5")
                .map_err(|e| e.to_string())
                .err()
                .as_deref(),
            Some("2.5 is outside 0..=2")
        );
        assert!(temperature("warm").is_err());
        assert_eq!(seconds("0.5").ok(), Some(0.5));
        for bad in ["0", "-1", "inf", "NaN", "soon"] {
            assert!(seconds(bad).is_err(), "{bad}");
        }
        assert_eq!(
            portfolio("fresh:4").ok(),
            Some(Portfolio(vec![(Proposer::Fresh, 4)]))
        );
        assert!(portfolio("guess:1").is_err());
    }
}
