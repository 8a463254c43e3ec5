//! `issuer rng-stream`: a revealed block's raw ChaCha20 stream, for the
//! statistical test suites of a test lab (dieharder, PractRand, TestU01):
//! the RNG's output before any bounded draw (docs/FORMAT.md §Randomness).

use std::path::{Path, PathBuf};

use super::emission::EmissionArg;
use super::json::{json_line, print_json};
use ticket_issuer::emission::Reveal;
use ticket_issuer::error::{echo, Error};
use ticket_issuer::rng::write_keystream;
use ticket_issuer::store::Store;

/// The most `--bytes` takes: 1 TiB.
const MAX_BYTES: u64 = 1 << 40;

/// Arguments of `rng-stream`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The emission.
    #[command(flatten)]
    pub emission: EmissionArg,
    /// The block whose revealed seed keys the stream.
    #[arg(long)]
    pub block: u32,
    /// The stream number (the ChaCha20 nonce): unit i's payload is stream
    /// i + 1, a L'île au trésor block's lot order stream 0.
    #[arg(long)]
    pub stream: u64,
    /// How many bytes, from block counter 0: bytes, or K, M, G, T (KiB,
    /// MiB, GiB, TiB; 1K = 1024); 1 byte to 1 TiB.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub bytes: u64,
    /// Where to write them: a file (put in place complete, or not at all),
    /// or `-` for standard output (to pipe into `dieharder -g 200`).
    #[arg(long, short = 'o', value_name = "FILE|-")]
    pub out: PathBuf,
    /// Replace the output file if it exists.
    #[arg(long)]
    pub force: bool,
    /// The emission's reveal file (`issuer reveal`), for an auditor; by
    /// default the seeds of a revealed emission come from the issuer's store.
    #[arg(long, value_name = "FILE")]
    pub reveal: Option<PathBuf>,
    /// Print a JSON report (on standard error with `--out -`).
    #[arg(long)]
    pub json: bool,
}

/// What `rng-stream --json` reports (docs/CLI.md).
#[derive(serde::Serialize)]
struct Report {
    emission: u32,
    game: String,
    block: u32,
    stream: u64,
    bytes: u64,
    out: String,
    sha256: String,
}

/// Runs `rng-stream`.
pub fn run(store: &Store, args: &Args) -> Result<i32, Error> {
    let (reveal, from) = match &args.reveal {
        Some(path) => (given_reveal(args, path)?, path.clone()),
        None => {
            let emission = args.emission.open(store)?;
            (emission.revealed()?, emission.dir())
        }
    };
    let seed = reveal.block_seed(args.block, &from)?;
    let mut out = store.output(&args.out, 0o644, args.force)?;
    let sha256 = write_keystream(&seed, args.stream, args.bytes, &mut out)
        .map_err(|e| Error::io(Path::new(&out.describe()), e))?;
    out.finish()?;
    let report = Report {
        emission: reveal.emission,
        game: reveal.game,
        block: args.block,
        stream: args.stream,
        bytes: args.bytes,
        out: args.out.display().to_string(),
        sha256: hex::encode(sha256),
    };
    let to_stdout = args.out == Path::new("-");
    match (args.json, to_stdout) {
        (true, false) => print_json("rng_stream", &report),
        (true, true) => eprintln!("{}", json_line("rng_stream", &report)),
        (false, _) => {
            let line = format!(
                "wrote {} bytes of stream {} of {} emission {} block {} (raw ChaCha20 keystream from counter 0) to {}; sha256 {}",
                report.bytes,
                report.stream,
                report.game,
                report.emission,
                report.block,
                if to_stdout { "standard output" } else { &report.out },
                report.sha256
            );
            // Standard output may be the stream itself.
            match to_stdout {
                true => eprintln!("{line}"),
                false => outln!("{line}"),
            }
        }
    }
    Ok(0)
}

/// `--reveal FILE`, which must be the reveal of the emission asked for.
fn given_reveal(args: &Args, path: &Path) -> Result<Reveal, Error> {
    let reveal = Reveal::read(path)?;
    let game_differs = args
        .emission
        .game
        .as_ref()
        .is_some_and(|g| *g != reveal.game);
    if reveal.emission != args.emission.emission || game_differs {
        return Err(Error::BadFile {
            path: path.to_path_buf(),
            reason: format!(
                "it is the reveal of {} emission {}, not of emission {}{}",
                echo(&reveal.game),
                reveal.emission,
                args.emission.emission,
                args.emission
                    .game
                    .as_ref()
                    .map(|g| format!(" of {}", echo(g)))
                    .unwrap_or_default()
            ),
        });
    }
    Ok(reveal)
}

/// `--bytes`: a number of bytes, or of K, M, G or T (KiB … TiB, binary).
fn parse_size(text: &str) -> Result<u64, String> {
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" => 0,
        "k" | "kib" => 10,
        "m" | "mib" => 20,
        "g" | "gib" => 30,
        "t" | "tib" => 40,
        _ => {
            return Err(format!(
                "unknown unit {:?}: give bytes, or a number with K, M, G or T (KiB, MiB, GiB, TiB; 1K = 1024)",
                echo(unit)
            ))
        }
    };
    let too_large = || "more than 1 TiB, the most rng-stream writes".to_string();
    let count: u64 = match number.parse() {
        Ok(n) => n,
        Err(_) if number.is_empty() => return Err("no number of bytes".into()),
        Err(_) => return Err(too_large()),
    };
    match count.checked_mul(1 << shift) {
        Some(0) => Err("0 bytes: give at least 1".into()),
        Some(bytes) if bytes <= MAX_BYTES => Ok(bytes),
        _ => Err(too_large()),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_are_bytes_or_binary_multiples_up_to_a_tebibyte() {
        for (text, bytes) in [
            ("1", 1),
            ("4096", 4096),
            ("1K", 1024),
            ("1k", 1024),
            ("3KiB", 3 * 1024),
            ("1M", 1 << 20),
            ("2MiB", 2 << 20),
            ("1G", 1 << 30),
            ("1gib", 1 << 30),
            ("1T", 1 << 40),
            ("1024G", 1 << 40),
        ] {
            assert_eq!(parse_size(text), Ok(bytes), "{text}");
        }
        for text in [
            "",
            "0",
            "0K",
            "12Q",
            "1KB",
            "1.5M",
            "-1",
            "K",
            " 1",
            "1 K",
            "1025G",
            "2T",
            "99999999999999999999",
        ] {
            assert!(parse_size(text).is_err(), "{text:?} accepted");
        }
    }
}
