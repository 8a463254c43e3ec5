//! Checkpoints witnesses cosigned (docs/REDEMPTION.md §Cosigned
//! checkpoints): the quorum policy (k of the configured witnesses), the
//! cosigned note (the log's signed note with the witnesses' `cosignature/v1`
//! lines after the log's own), and the check `ledger verify --witness-key`
//! and the audit run. Storage-free: the ledger keeps a head's note, and
//! `Backend::cosign_head` replaces it by its cosigned form once the policy
//! is met.

use serde::Serialize;

use crate::log::LogSource;
use crate::witness::cosignature::verify_cosignature;
use crate::witness::note::Vkey;
use ticket_issuer_core::error::Error;

/// k of n: the witnesses a checkpoint needs.
#[derive(Clone, Debug)]
pub struct Quorum {
    /// The witnesses' verifier keys (C2SP vkey, type 0x04).
    pub witnesses: Vec<Vkey>,
    /// How many of them must cosign (1 ≤ k ≤ n).
    pub k: usize,
}

impl Quorum {
    /// k of `witnesses`; `Err` says why not.
    pub fn new(witnesses: Vec<Vkey>, k: usize) -> Result<Quorum, String> {
        if witnesses.is_empty() {
            return Err("no witness is named".into());
        }
        if k == 0 || k > witnesses.len() {
            return Err(format!(
                "a quorum of {k} of {} witnesses: it must be 1 to {}",
                witnesses.len(),
                witnesses.len()
            ));
        }
        for (n, w) in witnesses.iter().enumerate() {
            if witnesses[..n].iter().any(|o| o.name() == w.name()) {
                return Err(format!("the witness {} is named twice", w.name()));
            }
        }
        Ok(Quorum { witnesses, k })
    }

    /// The quorum of the command line: witness verifier keys (`--witness-key`)
    /// and K (default: all); `None` when no key is given.
    pub fn from_args(keys: &[String], k: Option<usize>) -> Result<Option<Quorum>, String> {
        if keys.is_empty() {
            return Ok(None);
        }
        let witnesses = keys
            .iter()
            .map(|key| Vkey::parse(key).map_err(|e| format!("--witness-key {key}: {e}")))
            .collect::<Result<Vec<_>, _>>()?;
        let k = k.unwrap_or(witnesses.len());
        Quorum::new(witnesses, k)
            .map(Some)
            .map_err(|e| format!("--witness-quorum: {e}"))
    }

    /// The witnesses whose cosignature on `note` verifies.
    #[must_use]
    pub fn cosigners(&self, note: &str) -> Vec<&Vkey> {
        self.witnesses
            .iter()
            .filter(|w| verify_cosignature(note, w).is_ok())
            .collect()
    }

    /// `note` carries the cosignatures of k witnesses.
    #[must_use]
    pub fn met(&self, note: &str) -> bool {
        self.cosigners(note).len() >= self.k
    }
}

/// `note` with the cosignature `lines` after its signatures (each line
/// once; a line already there is not added again).
#[must_use]
pub fn with_cosignatures(note: &str, lines: &[String]) -> String {
    let mut out = format!("{}\n", note.trim_end_matches('\n'));
    for line in lines {
        let line = format!("{}\n", line.trim_end_matches('\n'));
        if !out.contains(&line) {
            out.push_str(&line);
        }
    }
    out
}

/// What `ledger verify --witness-key` found (`witnesses` in its report).
#[derive(Clone, Debug, Serialize)]
pub struct WitnessCheck {
    /// The quorum asked: k of n.
    pub quorum: String,
    /// The largest head with witnesses' cosignatures, if any.
    pub witnessed_size: Option<u64>,
    /// The latest head's size.
    pub latest_size: Option<u64>,
    /// The witnesses whose cosignature on that head verifies.
    pub cosigned_by: Vec<String>,
    /// Cosignature lines named after a given witness that do not verify
    /// (a tampered or forged cosignature).
    pub bad: Vec<String>,
    /// The witnessed head meets the quorum and no cosignature is bad.
    pub ok: bool,
}

/// Checks the log of `source` against `quorum`: its latest witnessed head
/// must carry k valid cosignatures, and no line naming one of the
/// witnesses may fail to verify.
pub fn check(source: &dyn LogSource, quorum: &Quorum) -> Result<WitnessCheck, Error> {
    let latest_size = source.latest_head()?.map(|h| h.size);
    let witnessed = source.latest_witnessed_head()?;
    let mut check = WitnessCheck {
        quorum: format!("{} of {}", quorum.k, quorum.witnesses.len()),
        witnessed_size: witnessed.as_ref().map(|h| h.size),
        latest_size,
        cosigned_by: Vec::new(),
        bad: Vec::new(),
        ok: false,
    };
    let Some(head) = witnessed else {
        return Ok(check);
    };
    for w in &quorum.witnesses {
        match verify_cosignature(&head.checkpoint, w) {
            Ok(_) => check.cosigned_by.push(w.name().to_string()),
            Err(e) if head.checkpoint.contains(&format!("\u{2014} {} ", w.name())) => {
                check.bad.push(format!("{}: {e}", w.name()));
            }
            Err(_) => {}
        }
    }
    check.ok = check.cosigned_by.len() >= quorum.k && check.bad.is_empty();
    Ok(check)
}
