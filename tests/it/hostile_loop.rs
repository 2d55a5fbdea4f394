//! The fix loop keeps going when the program under repair is hostile: each seed below attacks
//! the runner in its own way, the debugging round still happens, and the scripted model's
//! repaired program is accepted. The runner is the real sandbox.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use ldb::generate::model::scripted::ScriptedModel;
use ldb::generate::prompts::Prompts;
use ldb::repair::progress::Silent;
use ldb::repair::record::FixStatus;
use ldb::repair::{FixOptions, Fixer, Strategy};
use ldb::run::sandbox::{Limits, Sandbox};
use ldb::run::Runner;
use ldb::task::{load_tasks, Task};

const FIXED: &str = "def sum_evens(xs: list) -> int:\n    total = 0\n    for x in xs:\n        if x % 2 == 0:\n            total += x\n    return total\n";
const VERDICTS: &str = r#"{"verdicts": [{"block": "BLOCK-0", "correct": false, "explanation": "this block misbehaves"}]}"#;

/// Hostile seeds for `sum_evens`, by what they do.
const SEEDS: &[(&str, &str)] = &[
    (
        "spins forever ignoring SIGTERM",
        "import signal\ndef sum_evens(xs):\n    signal.signal(signal.SIGTERM, signal.SIG_IGN)\n    while True:\n        pass\n",
    ),
    (
        "exits the interpreter while loading",
        "import os\nos._exit(0)\ndef sum_evens(xs):\n    return 0\n",
    ),
    (
        "raises SystemExit when called",
        "def sum_evens(xs):\n    raise SystemExit(0)\n",
    ),
    (
        "allocates without bound",
        "def sum_evens(xs):\n    hoard = []\n    while True:\n        hoard.append(bytearray(64 << 20))\n",
    ),
    (
        "floods stdout",
        "import sys\ndef sum_evens(xs):\n    while True:\n        sys.stdout.write('x' * 65536)\n",
    ),
    (
        "forks without bound",
        "import os\ndef sum_evens(xs):\n    while True:\n        try:\n            os.fork()\n        except OSError:\n            pass\n",
    ),
    (
        "segfaults",
        "import ctypes\ndef sum_evens(xs):\n    return ctypes.string_at(0)\n",
    ),
];

fn task(seed: &str) -> Task {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sum_evens/task.json");
    let mut task = load_tasks(&path)
        .expect("example loads")
        .into_iter()
        .next()
        .expect("one task");
    task.seed = Some(seed.to_string());
    task
}

#[tokio::test(flavor = "multi_thread")]
async fn the_loop_repairs_every_hostile_seed() {
    let limits = Limits::default().with_wall(Duration::from_secs(3));
    for (what, seed) in SEEDS {
        let debugger = Arc::new(ScriptedModel::new([
            VERDICTS.to_string(),
            format!("```python\n{FIXED}```\n"),
        ]));
        let fixer = Fixer {
            seed: Default::default(),
            generator: Arc::new(ScriptedModel::new(Vec::<String>::new())),
            debugger: debugger.clone(),
            runner: Runner::new(Sandbox::new(env!("CARGO_BIN_EXE_ldb"), limits.clone())),
            prompts: Prompts::new().expect("templates load"),
            options: FixOptions {
                strategy: Strategy::Ldb,
                max_iters: 2,
                ..FixOptions::default()
            },
        };
        let report = fixer.fix(&task(seed), &Silent).await;
        assert_eq!(
            report.status,
            FixStatus::Fixed,
            "seed that {what}: {report:?}"
        );
        assert_eq!(report.final_program, FIXED, "seed that {what}");
        assert_eq!(report.iterations[0].passed, 0, "seed that {what}");
        assert!(
            !debugger.requests().is_empty(),
            "seed that {what}: the debugger was never asked"
        );
    }
}
