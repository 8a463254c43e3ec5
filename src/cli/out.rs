//! Standard output for every command: one place that decides what a
//! failed write means. A reader that went away (`issuer show ID | head -1`:
//! a closed pipe) ends the command with exit 0, as docs/CLI.md promises:
//! whatever the command did is done and nothing is left to say. Any other
//! write failure (a full disk behind a redirection) is exit 3.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// Words go to standard error: the run prints JSON on standard output
/// (`demo --json`).
static WORDS_TO_STDERR: AtomicBool = AtomicBool::new(false);

/// The command's steps are not said (`-q`): only its conclusion.
static QUIET: AtomicBool = AtomicBool::new(false);

/// From now on, the command's words go to standard error.
pub fn words_to_stderr() {
    WORDS_TO_STDERR.store(true, Ordering::Relaxed);
}

/// From now on, the command says only its conclusion ([`conclude`]):
/// `-q`. JSON and the errors are written as ever.
pub fn quiet() {
    QUIET.store(true, Ordering::Relaxed);
}

/// Writes the command's conclusion, a line, even under `-q`.
pub fn conclude(args: std::fmt::Arguments) {
    write(args, true);
}

/// Writes `text` to standard output.
pub fn bytes(text: &[u8]) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text).and_then(|()| out.flush()) {
        gone(&e);
    }
}

/// Writes formatted text, with a newline when `newline` (nothing under
/// `-q`).
pub fn fmt(args: std::fmt::Arguments, newline: bool) {
    if !QUIET.load(Ordering::Relaxed) {
        write(args, newline);
    }
}

fn write(args: std::fmt::Arguments, newline: bool) {
    if WORDS_TO_STDERR.load(Ordering::Relaxed) {
        let end = if newline { "\n" } else { "" };
        eprint!("{args}{end}");
        return;
    }
    let mut out = std::io::stdout().lock();
    let written = out
        .write_fmt(args)
        .and_then(|()| {
            if newline {
                out.write_all(b"\n")
            } else {
                Ok(())
            }
        })
        .and_then(|()| out.flush());
    if let Err(e) = written {
        gone(&e);
    }
}

/// Ends the process after a failed write to standard output.
pub fn gone(e: &std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(super::exit::EXIT_OK);
    }
    eprintln!("error: standard output: {e}");
    std::process::exit(super::exit::EXIT_UNAVAILABLE)
}

/// `println!` through [`fmt`].
macro_rules! outln {
    () => {
        $crate::cli::out::fmt(format_args!(""), true)
    };
    ($($arg:tt)*) => {
        $crate::cli::out::fmt(format_args!($($arg)*), true)
    };
}

/// A conclusion's line, said even under `-q` ([`conclude`]).
macro_rules! concludeln {
    ($($arg:tt)*) => {
        $crate::cli::out::conclude(format_args!($($arg)*))
    };
}

/// `print!` through [`fmt`].
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::out::fmt(format_args!($($arg)*), false)
    };
}
