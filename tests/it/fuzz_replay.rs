//! Replays every fuzz corpus and crash file (fixtures/fuzz/<target>/) through
//! the entry function its fuzz target calls (docs/FUZZING.md): none may
//! panic, and each crash reproducer must give the outcome written in its
//! `.expect` file, the behaviour its fix settled on.

use crate::fuzz_entries as entries;

use std::path::{Path, PathBuf};

type Entry = fn(&[u8]) -> String;

const TARGETS: [(&str, Entry); 5] = [
    ("block_reader", entries::block_reader),
    ("unit_id", entries::unit_id),
    ("manifest", entries::manifest),
    ("reveal", entries::reveal),
    ("key_files", entries::key_files),
];

/// The inputs of `target`'s `folder` ("corpus" or "crashes"), without the
/// `.expect` files.
fn inputs(target: &str, folder: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/fuzz")
        .join(target)
        .join(folder);
    let Ok(read) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = read
        .map(|e| e.expect("a readable fuzz fixture folder").path())
        .filter(|p| p.extension().is_none_or(|x| x != "expect"))
        .collect();
    files.sort();
    files
}

/// Runs `entry` on the file at `path`; the panic message if it panics.
fn replay(entry: Entry, path: &Path) -> Result<String, String> {
    let data = std::fs::read(path).expect("a readable fuzz fixture");
    std::panic::catch_unwind(|| entry(&data)).map_err(|p| {
        p.downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    })
}

#[test]
fn every_corpus_file_replays_without_panic() {
    let mut panics = Vec::new();
    for (target, entry) in TARGETS {
        let files = inputs(target, "corpus");
        assert!(!files.is_empty(), "{target} has no corpus");
        for path in files {
            if let Err(message) = replay(entry, &path) {
                panics.push(format!("{}: {message}", path.display()));
            }
        }
    }
    assert!(panics.is_empty(), "panics:\n{}", panics.join("\n"));
}

#[test]
fn every_crash_reproducer_gives_its_documented_outcome() {
    let mut wrong = Vec::new();
    for (target, entry) in TARGETS {
        for path in inputs(target, "crashes") {
            let expect_path = path.with_extension("expect");
            let expected = std::fs::read_to_string(&expect_path)
                .unwrap_or_else(|_| panic!("{} has no .expect file", path.display()));
            match replay(entry, &path) {
                Ok(outcome) if outcome == expected.trim_end() => {}
                Ok(outcome) => wrong.push(format!(
                    "{}: gave {outcome:?}, expected {:?}",
                    path.display(),
                    expected.trim_end()
                )),
                Err(message) => wrong.push(format!("{}: panics: {message}", path.display())),
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The block corpus reaches the deep path (whatever `cmin` named its
/// files): some input opens the sealed chunk 0 with the fixed key and every
/// unit plays, and some plain frame does so re-encrypted.
#[test]
fn block_corpus_reaches_the_unit_checks() {
    let outcomes: Vec<String> = inputs("block_reader", "corpus")
        .iter()
        .filter_map(|p| replay(entries::block_reader, p).ok())
        .collect();
    for reached in [
        "index ok, roots ok; sealed chunk: ok",
        "roots ok; plain chunk: ok",
    ] {
        assert!(
            outcomes.iter().any(|o| o.ends_with(reached)),
            "no corpus file reaches {reached:?}: {outcomes:?}"
        );
    }
}
