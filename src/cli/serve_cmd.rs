//! `ldb serve`: the configured model (by default the embedded one) behind an OpenAI-compatible
//! HTTP API on loopback.

use std::io::Write;

use super::output::{CliError, ExitStatus};
use super::ServeArgs;
use crate::serve::{serve, ServeState, Timeouts};

pub fn run(args: &ServeArgs) -> Result<ExitStatus, CliError> {
    let ip: std::net::IpAddr = args.host.parse().map_err(|_| {
        CliError::bad_input(
            format!("--host {} is not an IP address", args.host),
            "use 127.0.0.1 (the default) or ::1",
        )
    })?;
    if !ip.is_loopback() {
        eprintln!(
            "warning: serving on {ip}, which other machines may reach; the API has no authentication"
        );
    }
    let timeout = |flag: &str, secs: f64| {
        if secs.is_finite() && secs > 0.0 {
            Ok(std::time::Duration::from_secs_f64(secs))
        } else {
            Err(CliError::bad_input(
                format!("{flag} must be a positive number of seconds, got {secs}"),
                format!("e.g. {flag} 10"),
            ))
        }
    };
    let timeouts = Timeouts {
        header: timeout("--header-timeout", args.header_timeout)?,
        body: timeout("--body-timeout", args.body_timeout)?,
    };
    let (model, _) = super::models::build(&args.model)?;
    let model_id = args
        .served_name
        .clone()
        .unwrap_or_else(|| model.name().trim_start_matches("local:").to_string());
    let runtime = super::runtime()?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind((ip, args.port))
            .await
            .map_err(|e| {
                CliError::bad_input(
                    format!("cannot listen on {ip}:{}: {e}", args.port),
                    "pick another --port (0 picks a free one)",
                )
            })?;
        let addr = listener
            .local_addr()
            .map_err(|e| CliError::sandbox(format!("listener address: {e}")))?;
        // The base URL is the one piece of data: scripts read it from stdout.
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "http://{addr}/v1");
        let _ = out.flush();
        drop(out);
        eprintln!("ldb: serving `{model_id}` at http://{addr}/v1 (Ctrl-C stops)");
        let state = ServeState::new(model, model_id);
        tokio::select! {
            r = serve(listener, state, timeouts) => r.map_err(|e| CliError::sandbox(format!("server stopped: {e}"))),
            _ = tokio::signal::ctrl_c() => Ok(()),
        }
    })?;
    Ok(ExitStatus::Success)
}
