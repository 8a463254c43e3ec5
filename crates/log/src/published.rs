//! The log as anyone can mirror it: the C2SP tlog-tiles resources of the
//! latest signed head (docs/REDEMPTION.md §Tiles anyone can mirror):
//! `checkpoint`, `tile/<L>/<N>[.p/<W>]` and `tile/entries/<N>[.p/<W>]`,
//! their paths ([`Resource`]), their bytes over a [`LogSource`]
//! ([`PublishedLog`]), and a folder of static files holding them
//! ([`write_static`]). Served by `issuer serve` (`/v1/log/…`) and written
//! by `issuer ledger tiles --out DIR`.
//!
//! Our reading of the spec (c2sp.org/tlog-tiles):
//! - a tile or bundle is served only when every hash (entry) it holds is
//!   under the head: `(256·N + W) · 256^L ≤ size` (W = 256 for a full
//!   tile). So a full tile only once the head covers it whole; a partial
//!   one at any width up to what the head covers, which is what every
//!   earlier head (each commit signs one) needed, and is the same bytes
//!   whenever asked: every tile path names immutable content.
//! - the index is 3-digit groups, all but the last prefixed `x`, with no
//!   leading all-zero group (`x001/x234/067`; 5 is `005`); the level and
//!   the width are decimal without leading zeros, `L` in 0..=63 and `W` in
//!   1..=255. Any other spelling is refused, so one resource has one path.
//! - the tiles are those of the database ([`crate::tiles`]) cut to the
//!   width asked; where the stored tiles lag behind the head (a ledger
//!   being tiled from its leaves, a PostgreSQL sequencer's back-fill) the
//!   missing hashes are made from the entries ([`LogSource::entries`]),
//!   so what is served never depends on how far the tiling has gone.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::log::{missing_entry, LogSource, StoredHead};
use crate::tiles::{TileId, TileSource, WIDTH};
use ticket_issuer_core::error::Error;
use ticket_issuer_core::merkle::{self, Hash};

/// Highest tile level a path may name (the spec's bound).
pub const MAX_LEVEL: u8 = 63;

/// A resource of the log under `tile/`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resource {
    /// `tile/<L>/<N>[.p/<W>]`: hashes of level `level`.
    Tile {
        /// The tile's level (0: leaf hashes).
        level: u8,
        /// Its index within the level.
        index: u64,
        /// Hashes it holds: 256 for a full tile, 1 to 255 for a partial one.
        width: u16,
    },
    /// `tile/entries/<N>[.p/<W>]`: the entries under level-0 tile `index`.
    Entries {
        /// The bundle's index (that of its level-0 tile).
        index: u64,
        /// Entries it holds: 256 when full, else 1 to 255.
        width: u16,
    },
}

/// Why a path is not one of a resource (`issuer serve` answers 400).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TilePathError {
    /// Not `tile/<L>/<N>[.p/<W>]` nor `tile/entries/<N>[.p/<W>]`.
    Shape {
        /// The path as given.
        path: String,
    },
    /// The level is not a decimal 0 to 63 without leading zeros.
    Level {
        /// The level as given.
        found: String,
    },
    /// The index is not 3-digit groups, all but the last `x`-prefixed,
    /// without a leading `x000`.
    Index {
        /// The index as given.
        found: String,
    },
    /// The width is not a decimal 1 to 255 without leading zeros.
    Width {
        /// The width as given.
        found: String,
    },
}

impl std::fmt::Display for TilePathError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TilePathError::Shape { path } => write!(
                f,
                "{path:?} is not a tile path: tile/<L>/<N>[.p/<W>] or tile/entries/<N>[.p/<W>] (c2sp.org/tlog-tiles)"
            ),
            TilePathError::Level { found } => write!(
                f,
                "tile level {found:?} is not a decimal 0 to 63 without leading zeros"
            ),
            TilePathError::Index { found } => write!(
                f,
                "tile index {found:?} is not 3-digit groups, all but the last prefixed x, with no leading x000 (1234067 is x001/x234/067, 5 is 005)"
            ),
            TilePathError::Width { found } => write!(
                f,
                "partial width {found:?} is not a decimal 1 to 255 without leading zeros (a full tile has no .p/ part)"
            ),
        }
    }
}

impl std::error::Error for TilePathError {}

/// A decimal without leading zeros (and no sign), at most `max`.
fn canonical_decimal(text: &str, max: u64) -> Option<u64> {
    let well_formed = !text.is_empty()
        && text.len() <= 20
        && text.bytes().all(|b| b.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'));
    well_formed
        .then(|| text.parse::<u64>().ok())
        .flatten()
        .filter(|n| *n <= max)
}

/// `N` as the spec's path elements: `x001/x234/067`.
#[must_use]
pub fn index_path(index: u64) -> String {
    let mut groups = vec![format!("{:03}", index % 1000)];
    let mut rest = index / 1000;
    while rest > 0 {
        groups.push(format!("x{:03}", rest % 1000));
        rest /= 1000;
    }
    groups.reverse();
    groups.join("/")
}

/// The index of path elements `groups` (strict: see [`index_path`]).
fn parse_index(groups: &[&str]) -> Option<u64> {
    let (last, upper) = groups.split_last()?;
    let digits = |g: &str| (g.len() == 3 && g.bytes().all(|b| b.is_ascii_digit())).then_some(());
    if upper.first().is_some_and(|g| *g == "x000") {
        return None;
    }
    let mut index: u64 = 0;
    for g in upper {
        let d = g.strip_prefix('x')?;
        digits(d)?;
        index = index.checked_mul(1000)?.checked_add(d.parse().ok()?)?;
    }
    digits(last)?;
    index.checked_mul(1000)?.checked_add(last.parse().ok()?)
}

impl Resource {
    /// Its path under the log's prefix (`tile/0/x001/234.p/7`).
    #[must_use]
    pub fn path(&self) -> String {
        let (kind, index, width) = match *self {
            Resource::Tile {
                level,
                index,
                width,
            } => (level.to_string(), index, width),
            Resource::Entries { index, width } => ("entries".to_string(), index, width),
        };
        let partial = if u64::from(width) < WIDTH {
            format!(".p/{width}")
        } else {
            String::new()
        };
        format!("tile/{kind}/{}{partial}", index_path(index))
    }

    /// The resource at `path` (as [`Resource::path`] writes it); any
    /// other spelling is refused, naming the part that is wrong.
    pub fn from_path(path: &str) -> Result<Resource, TilePathError> {
        let shape = || TilePathError::Shape {
            path: path.to_string(),
        };
        let rest = path.strip_prefix("tile/").ok_or_else(shape)?;
        let mut parts: Vec<&str> = rest.split('/').collect();
        if parts.len() < 2 || parts.iter().any(|p| p.is_empty()) {
            return Err(shape());
        }
        let kind = parts.remove(0);
        let mut width = WIDTH as u16;
        if let Some(at) = parts.len().checked_sub(2) {
            let (last_group, w) = (parts[at], parts[at + 1]);
            if let Some(group) = last_group.strip_suffix(".p") {
                width = canonical_decimal(w, WIDTH - 1)
                    .filter(|w| *w >= 1)
                    .and_then(|w| u16::try_from(w).ok())
                    .ok_or_else(|| TilePathError::Width {
                        found: w.to_string(),
                    })?;
                parts[at] = group;
                parts.truncate(at + 1);
            }
        }
        let index = parse_index(&parts).ok_or_else(|| TilePathError::Index {
            found: parts.join("/"),
        })?;
        if kind == "entries" {
            return Ok(Resource::Entries { index, width });
        }
        let level = canonical_decimal(kind, u64::from(MAX_LEVEL))
            .and_then(|l| u8::try_from(l).ok())
            .ok_or_else(|| TilePathError::Level {
                found: kind.to_string(),
            })?;
        Ok(Resource::Tile {
            level,
            index,
            width,
        })
    }

    /// Whether a log of `size` entries determines it whole.
    #[must_use]
    pub fn within(&self, size: u64) -> bool {
        let (level, index, width) = match *self {
            Resource::Tile {
                level,
                index,
                width,
            } => (level, index, width),
            Resource::Entries { index, width } => (0, index, width),
        };
        // Leaves under its last hash: (256·N + W) · 256^L.
        let end = index
            .checked_mul(WIDTH)
            .and_then(|n| n.checked_add(u64::from(width)))
            .and_then(|n| {
                WIDTH
                    .checked_pow(u32::from(level))
                    .and_then(|span| n.checked_mul(span))
            });
        end.is_some_and(|end| end <= size)
    }

    /// Every tile and bundle a head of `size` entries needs, in the
    /// spec's shape: at each level, the full tiles and the partial last one
    /// (its width `⌊size / 256^L⌋ mod 256`); bundles as level 0.
    #[must_use]
    pub fn all_of(size: u64) -> Vec<Resource> {
        let mut out = Vec::new();
        let mut hashes = size;
        let mut level = 0u8;
        while hashes > 0 {
            let (full, partial) = (hashes / WIDTH, (hashes % WIDTH) as u16);
            let last = full + u64::from(partial > 0);
            for index in 0..last {
                let width = if index < full { WIDTH as u16 } else { partial };
                out.push(Resource::Tile {
                    level,
                    index,
                    width,
                });
                if level == 0 {
                    out.push(Resource::Entries { index, width });
                }
            }
            hashes /= WIDTH;
            level += 1;
        }
        out
    }
}

/// Which head a node publishes (docs/REDEMPTION.md §Cosigned checkpoints):
/// its latest, or, when its witnessing fails closed, its latest witnessed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Publication {
    /// The latest signed head (cosigned or not).
    #[default]
    Latest,
    /// The latest head its witnesses cosigned.
    Witnessed,
}

impl Publication {
    /// The log of `source` as this publication shows it; `None` before
    /// such a head.
    pub fn of<'s>(self, source: &'s dyn LogSource) -> Result<Option<PublishedLog<'s>>, Error> {
        match self {
            Publication::Latest => PublishedLog::latest(source),
            Publication::Witnessed => PublishedLog::witnessed(source),
        }
    }
}

/// The latest signed head of a log, and the resources under it.
pub struct PublishedLog<'s> {
    source: &'s dyn LogSource,
    head: StoredHead,
}

impl<'s> PublishedLog<'s> {
    /// The log of `source` as of its latest signed head; `None` before the
    /// first one.
    pub fn latest(source: &'s dyn LogSource) -> Result<Option<PublishedLog<'s>>, Error> {
        Ok(source
            .latest_head()?
            .map(|head| PublishedLog { source, head }))
    }

    /// The log of `source` as of its latest head that witnesses cosigned
    /// (docs/REDEMPTION.md §Cosigned checkpoints); `None` before one.
    pub fn witnessed(source: &'s dyn LogSource) -> Result<Option<PublishedLog<'s>>, Error> {
        Ok(source
            .latest_witnessed_head()?
            .map(|head| PublishedLog { source, head }))
    }

    /// Entries under the head.
    #[must_use]
    pub fn size(&self) -> u64 {
        self.head.size
    }

    /// The `checkpoint` resource: the head's signed note as stored (the
    /// one place a note gains other signatures, e.g. witnesses', later).
    #[must_use]
    pub fn checkpoint(&self) -> String {
        self.head.checkpoint.clone()
    }

    /// The bytes of `resource`; `None` when the head does not determine it
    /// ([`Resource::within`]: beyond the head, never served).
    pub fn read(&self, resource: Resource) -> Result<Option<Vec<u8>>, Error> {
        if !resource.within(self.size()) {
            return Ok(None);
        }
        Ok(Some(match resource {
            Resource::Tile {
                level,
                index,
                width,
            } => self.hashes(level, index, usize::from(width))?.concat(),
            Resource::Entries { index, width } => {
                let from = index * WIDTH;
                let lines = self.lines(from, usize::from(width))?;
                let mut bundle = Vec::new();
                for (seq, line) in (from..).zip(&lines) {
                    let len = u16::try_from(line.len()).map_err(|_| Error::Internal {
                        what: format!(
                            "entry {seq} is {} bytes, more than an entry bundle's 65,535",
                            line.len()
                        ),
                    })?;
                    bundle.extend_from_slice(&len.to_be_bytes());
                    bundle.extend_from_slice(line.as_bytes());
                }
                bundle
            }
        }))
    }

    /// The `count` entries from `from`, all of them (else damage).
    fn lines(&self, from: u64, count: usize) -> Result<Vec<String>, Error> {
        let lines = self.source.entries(from, from + count as u64)?;
        if lines.len() < count {
            return Err(missing_entry(
                from + lines.len() as u64,
                Path::new(&self.source.log_name()),
            ));
        }
        Ok(lines)
    }

    /// The first `width` hashes of tile (`level`, `index`): the stored
    /// ones, and past them (tiles behind the head) hashes made from the
    /// entries, or from the full tiles of the level below.
    fn hashes(&self, level: u8, index: u64, width: usize) -> Result<Vec<Hash>, Error> {
        let mut hashes = self.source.tile((level, index))?;
        hashes.truncate(width);
        let have = hashes.len() as u64;
        if hashes.len() < width {
            if level == 0 {
                let from = index * WIDTH + have;
                let lines = self.lines(from, width - hashes.len())?;
                hashes.extend(lines.iter().map(|l| merkle::leaf_hash(l.as_bytes())));
            } else {
                for child in index * WIDTH + have..index * WIDTH + width as u64 {
                    let below = self.hashes(level - 1, child, WIDTH as usize)?;
                    hashes.push(merkle::root_from_hashes(&below));
                }
            }
        }
        Ok(hashes)
    }
}

/// The tiles as served under the head: a proof read through it
/// ([`crate::tiles::Cached`]) is made of what a mirror holds, and never
/// depends on how far the stored tiling has gone.
impl TileSource for PublishedLog<'_> {
    fn tile(&mut self, (level, index): TileId) -> Result<Vec<Hash>, Error> {
        // Hashes of `level` under the head: ⌊size / 256^level⌋.
        let under = WIDTH
            .checked_pow(u32::from(level))
            .map_or(0, |span| self.size() / span);
        let width = under.saturating_sub(index.saturating_mul(WIDTH)).min(WIDTH);
        if width == 0 {
            return Ok(Vec::new());
        }
        self.hashes(level, index, width as usize)
    }
}

/// What [`write_static`] did.
#[derive(Clone, Debug, Serialize)]
pub struct StaticReport {
    /// The folder.
    pub out: String,
    /// The head's size.
    pub size: u64,
    /// Tiles and bundles written now.
    pub written: u64,
    /// Tiles and bundles there already (immutable: left as they are).
    pub kept: u64,
    /// The checkpoint, written last.
    pub checkpoint: String,
}

/// Writes the head's resources under `out` as static files (`checkpoint`,
/// `tile/…`): a tile or bundle already there is left (its path names
/// immutable bytes); each new one is written whole (a temporary file
/// renamed); the checkpoint last, so a mirror never shows a head without
/// its tiles. Rerun as the log grows, it adds the new ones.
pub fn write_static(log: &PublishedLog, out: &Path) -> Result<StaticReport, Error> {
    let (mut written, mut kept) = (0, 0);
    for resource in Resource::all_of(log.size()) {
        let path = out.join(resource.path());
        if path.is_file() {
            kept += 1;
            continue;
        }
        let bytes = log.read(resource)?.ok_or_else(|| Error::Internal {
            what: format!(
                "{} is not under the head it was listed for",
                resource.path()
            ),
        })?;
        write_atomically(&path, &bytes)?;
        written += 1;
    }
    let checkpoint = log.checkpoint();
    write_atomically(&out.join("checkpoint"), checkpoint.as_bytes())?;
    Ok(StaticReport {
        out: out.display().to_string(),
        size: log.size(),
        written,
        kept,
        checkpoint,
    })
}

/// `bytes` at `path` whole or not at all: written to a temporary file in
/// the same folder, flushed to disk, renamed over.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let folder: PathBuf = path
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    std::fs::create_dir_all(&folder).map_err(|e| Error::io(&folder, e))?;
    let mut file = tempfile::NamedTempFile::new_in(&folder).map_err(|e| Error::io(&folder, e))?;
    file.write_all(bytes)
        .and_then(|()| file.as_file().sync_all())
        .map_err(|e| Error::io(path, e))?;
    // Readable by a web server, as a published file is.
    std::fs::set_permissions(
        file.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o644),
    )
    .map_err(|e| Error::io(path, e))?;
    file.persist(path).map_err(|e| Error::io(path, e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_the_specs_and_only_those_parse() {
        assert_eq!(index_path(1_234_067), "x001/x234/067");
        assert_eq!(index_path(5), "005");
        assert_eq!(index_path(1000), "x001/000");
        let tile = Resource::Tile {
            level: 1,
            index: 1_234_067,
            width: 7,
        };
        assert_eq!(tile.path(), "tile/1/x001/x234/067.p/7");
        assert_eq!(Resource::from_path(&tile.path()), Ok(tile));
        let bundle = Resource::Entries {
            index: 3,
            width: 256,
        };
        assert_eq!(bundle.path(), "tile/entries/003");
        assert_eq!(Resource::from_path("tile/entries/003"), Ok(bundle));
        assert_eq!(
            Resource::from_path(&format!("tile/0/{}", index_path(u64::MAX))),
            Ok(Resource::Tile {
                level: 0,
                index: u64::MAX,
                width: 256
            })
        );
        for (bad, part) in [
            ("tile/00/000", "level"),
            ("tile/01/000", "level"),
            ("tile/64/000", "level"),
            ("tile/-1/000", "level"),
            ("tile/0/5", "index"),
            ("tile/0/0005", "index"),
            ("tile/0/x000/005", "index"),
            ("tile/0/001/002", "index"),
            ("tile/0/x1/002", "index"),
            ("tile/0/x019/x000/000/000/000/000/000", "index"),
            ("tile/0/000.p/0", "width"),
            ("tile/0/000.p/256", "width"),
            ("tile/0/000.p/07", "width"),
            ("tile/0/000.p/+7", "width"),
            ("tile/0/000/", "shape"),
            ("tile/0", "shape"),
            ("tiles/0/000", "shape"),
            ("tile//000", "shape"),
        ] {
            let found = match Resource::from_path(bad) {
                Err(TilePathError::Level { .. }) => "level",
                Err(TilePathError::Index { .. }) => "index",
                Err(TilePathError::Width { .. }) => "width",
                Err(TilePathError::Shape { .. }) => "shape",
                Ok(r) => panic!("{bad} parsed as {r:?}"),
            };
            assert_eq!(found, part, "{bad}");
        }
    }

    #[test]
    fn a_head_determines_the_tiles_the_spec_lists() {
        // The spec's example: 70,000 leaves.
        let all = Resource::all_of(70_000);
        let tiles = |level| {
            all.iter()
                .filter_map(move |r| match r {
                    Resource::Tile {
                        level: l, width, ..
                    } if *l == level => Some(*width),
                    _ => None,
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(tiles(0).len(), 274);
        assert_eq!(tiles(0).last(), Some(&112));
        assert_eq!(tiles(1), vec![256, 17]);
        assert_eq!(tiles(2), vec![1]);
        assert!(all.iter().all(|r| r.within(70_000)));
        // 256 leaves: a full level-0 tile and a level-1 tile of width 1.
        assert_eq!(Resource::all_of(256).len(), 3);
        let beyond = Resource::Tile {
            level: 0,
            index: 273,
            width: 113,
        };
        assert!(!beyond.within(70_000));
        assert!(!Resource::Tile {
            level: 63,
            index: 1,
            width: 1
        }
        .within(u64::MAX));
        assert!(Resource::all_of(0).is_empty());
    }
}
