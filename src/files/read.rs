//! Reading a file the user named: regular files only (a FIFO or `/dev/zero` is refused before
//! anything is read, so ldb never hangs or fills memory), a size cap per kind of file, UTF-8,
//! and a byte-order mark accepted as CPython accepts it.

use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Size caps, by what the file is.
pub mod caps {
    /// A program, a test file or a snippet.
    pub const SOURCE: u64 = 16 << 20;
    /// A task file (`.json`/`.jsonl`), a seed file, a report.
    pub const DATA: u64 = 512 << 20;
}

/// Why a file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is {kind}, not a regular file", path.display())]
    NotRegular { path: PathBuf, kind: &'static str },
    #[error("{} is {size} bytes, over ldb's limit of {cap} bytes for this kind of file", path.display())]
    TooLarge { path: PathBuf, size: u64, cap: u64 },
    #[error("{} is not UTF-8 text", path.display())]
    NotUtf8 { path: PathBuf },
}

impl ReadError {
    /// What to do about it.
    pub fn hint(&self) -> &'static str {
        match self {
            ReadError::Io { .. } => "check the path and its permissions",
            ReadError::NotRegular { .. } => {
                "give a path to a regular file; to read a pipe or a device, copy it to a file first"
            }
            ReadError::TooLarge { .. } => {
                "ldb reads programs and tests of up to 16 MiB and task files of up to 512 MiB; \
                 check that this is the file you meant"
            }
            ReadError::NotUtf8 { .. } => "save the file as UTF-8",
        }
    }

    pub fn path(&self) -> &Path {
        match self {
            ReadError::Io { path, .. }
            | ReadError::NotRegular { path, .. }
            | ReadError::TooLarge { path, .. }
            | ReadError::NotUtf8 { path } => path,
        }
    }
}

/// A text file's content and how it was encoded, so it can be written back the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text {
    /// The text without a byte-order mark.
    pub text: String,
    /// The file started with a UTF-8 byte-order mark.
    pub bom: bool,
}

impl Text {
    /// `text` encoded as this file was: the byte-order mark again, and `\r\n` line ends when
    /// every line of the original ended so and `text` has bare `\n`s.
    pub fn encode_like(&self, text: &str) -> Vec<u8> {
        let mut out = Vec::with_capacity(text.len() + 3);
        if self.bom {
            out.extend_from_slice(b"\xEF\xBB\xBF");
        }
        if uses_crlf(&self.text) && !text.contains("\r\n") {
            out.extend_from_slice(text.replace('\n', "\r\n").as_bytes());
        } else {
            out.extend_from_slice(text.as_bytes());
        }
        out
    }
}

/// Every line of `text` ends with `\r\n` (and there is at least one line end).
pub fn uses_crlf(text: &str) -> bool {
    let lf = text.matches('\n').count();
    lf > 0 && text.matches("\r\n").count() == lf
}

/// The bytes of `path`, a regular file of at most `cap` bytes.
pub fn read_bytes(path: &Path, cap: u64) -> Result<Vec<u8>, ReadError> {
    let io = |source| ReadError::Io {
        path: path.to_path_buf(),
        source,
    };
    // O_NONBLOCK: opening a FIFO with no writer would wait for ever.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    let kind = meta.file_type();
    if !kind.is_file() {
        let what = if kind.is_dir() {
            "a directory"
        } else if kind.is_fifo() {
            "a FIFO (named pipe)"
        } else if kind.is_char_device() {
            "a character device"
        } else if kind.is_block_device() {
            "a block device"
        } else if kind.is_socket() {
            "a socket"
        } else {
            "a special file"
        };
        return Err(ReadError::NotRegular {
            path: path.to_path_buf(),
            kind: what,
        });
    }
    if meta.len() > cap {
        return Err(ReadError::TooLarge {
            path: path.to_path_buf(),
            size: meta.len(),
            cap,
        });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    // A file that grows while it is read still stops at the cap.
    file.take(cap + 1).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() as u64 > cap {
        return Err(ReadError::TooLarge {
            path: path.to_path_buf(),
            size: bytes.len() as u64,
            cap,
        });
    }
    Ok(bytes)
}

/// The text of `path` (see [`read_bytes`]); a leading byte-order mark is dropped and noted.
pub fn read_text(path: &Path, cap: u64) -> Result<Text, ReadError> {
    decode(path, read_bytes(path, cap)?)
}

/// `bytes` read from `path` as text.
pub fn decode(path: &Path, bytes: Vec<u8>) -> Result<Text, ReadError> {
    let text = String::from_utf8(bytes).map_err(|_| ReadError::NotUtf8 {
        path: path.to_path_buf(),
    })?;
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => Text {
            text: rest.to_string(),
            bom: true,
        },
        None => Text { text, bom: false },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_files_and_large_files_are_refused_before_reading() {
        let e = read_bytes(Path::new("/dev/zero"), caps::SOURCE).unwrap_err();
        assert!(
            matches!(
                e,
                ReadError::NotRegular {
                    kind: "a character device",
                    ..
                }
            ),
            "{e}"
        );
        let dir = tempfile::tempdir().unwrap();
        let e = read_bytes(dir.path(), caps::SOURCE).unwrap_err();
        assert!(matches!(e, ReadError::NotRegular { .. }), "{e}");
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_bytes(&fifo, caps::SOURCE).unwrap_err();
        assert!(matches!(e, ReadError::NotRegular { .. }), "{e}");
        let big = dir.path().join("big.py");
        std::fs::write(&big, vec![b'#'; 100]).unwrap();
        let e = read_bytes(&big, 99).unwrap_err();
        assert!(matches!(e, ReadError::TooLarge { size: 100, .. }), "{e}");
        assert_eq!(read_bytes(&big, 100).unwrap().len(), 100);
    }

    #[test]
    fn a_bom_is_dropped_and_written_back_with_crlf_lines() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("p.py");
        std::fs::write(&p, b"\xEF\xBB\xBFx = 1\r\ny = 2\r\n").unwrap();
        let t = read_text(&p, caps::SOURCE).unwrap();
        assert!(t.bom);
        assert_eq!(t.text, "x = 1\r\ny = 2\r\n");
        assert_eq!(
            t.encode_like("x = 3\ny = 2\n"),
            b"\xEF\xBB\xBFx = 3\r\ny = 2\r\n"
        );
        let plain = Text {
            text: "a\n".into(),
            bom: false,
        };
        assert_eq!(plain.encode_like("b\n"), b"b\n");
        std::fs::write(&p, [0xff, 0xfe]).unwrap();
        assert!(matches!(
            read_text(&p, caps::SOURCE),
            Err(ReadError::NotUtf8 { .. })
        ));
    }
}
