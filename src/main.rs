//! The `ldb` command. `ldb __worker` is the sandbox worker (the same binary, re-executed).

// Library and binary code returns errors instead of panicking; only tests may unwrap.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

use clap::Parser;

fn main() {
    if std::env::args_os().nth(1).as_deref()
        == Some(std::ffi::OsStr::new(ldb::run::sandbox::WORKER_COMMAND))
    {
        ldb::run::sandbox::worker_main();
    }
    let cli = ldb::cli::Cli::parse();
    let status = match ldb::cli::run(cli) {
        Ok(status) => status,
        Err(err) => {
            err.report();
            err.status
        }
    };
    std::process::exit(status as i32);
}
