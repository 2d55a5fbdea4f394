//! The debugger: verdicts about traced blocks, parsed from model replies.

pub mod verdicts;
