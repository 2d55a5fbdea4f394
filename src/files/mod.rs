//! Files ldb reads and writes on the user's behalf. Reads take regular files only, up to a size
//! cap, as UTF-8 with an optional byte-order mark ([`read`]). Writes replace a file atomically
//! and keep backups that are never trusted blindly ([`write`]); `ldb fix --write` holds the
//! program file for the whole run ([`guard`]). `--peers` finds other people's programs for the
//! same task ([`peers`]).

pub mod guard;
pub mod peers;
pub mod read;
pub mod write;

pub use guard::{CommitError, GuardError, WriteGuard};
pub use peers::{peer_programs, Peer, PeersError};
pub use read::{read_bytes, read_text, ReadError, Text};
pub use write::atomic_write;
