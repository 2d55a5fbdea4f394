//! `ldb serve`: the configured model (by default the embedded one) behind an OpenAI-compatible
//! HTTP API on loopback.

use std::io::Write;

use super::output::{CliError, ExitStatus};
use super::settings::ServeSettings;
use crate::serve::{serve, ServeState};

pub fn run(s: ServeSettings) -> Result<ExitStatus, CliError> {
    let ip = s.ip;
    if !ip.is_loopback() {
        eprintln!(
            "warning: serving on {ip}, which other machines may reach; the API has no authentication"
        );
    }
    // The server answers every request with the model: its clients keep their own caches
    // (ldb's HTTP client does), and a cached reply would report tokens nobody evaluated.
    let mut models = s.models.clone();
    models.generator.no_cache = true;
    models.debugger.no_cache = true;
    let (model, _) = crate::cli::models::load(&models)?;
    let model_id = s
        .served_name
        .clone()
        .unwrap_or_else(|| model.name().trim_start_matches("local:").to_string());
    let runtime = crate::cli::runtime()?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind((ip, s.port))
            .await
            .map_err(|e| {
                CliError::bad_input(
                    format!("cannot listen on {ip}:{}: {e}", s.port),
                    "pick another --port (0 picks a free one)",
                )
            })?;
        let addr = listener
            .local_addr()
            .map_err(|e| CliError::internal(format!("the listener has no address: {e}")))?;
        // The base URL is the one piece of data: scripts read it from stdout.
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "http://{addr}/v1");
        let _ = out.flush();
        drop(out);
        eprintln!("ldb: serving `{model_id}` at http://{addr}/v1 (Ctrl-C stops)");
        let state = ServeState::new(model, model_id);
        tokio::select! {
            r = serve(listener, state, s.timeouts) => r.map_err(|e| CliError::internal(format!("server stopped: {e}"))),
            _ = tokio::signal::ctrl_c() => Ok(()),
        }
    })?;
    Ok(ExitStatus::Success)
}
