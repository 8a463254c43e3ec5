//! SQL both databases share: column lists a row is read back by, in the
//! order their readers take them, and statements written once (SQLite's
//! `?` placeholders; PostgreSQL numbers them).

/// A redemption's place in the log and its hashed facts
/// ([`crate::ledger::log::OwnedFields`]).
pub const REDEMPTION_COLUMNS: &str =
    "seq, leaf_hash, game, emission, block, unit_index, unit_id, lot,
    prize_cents, record_sha256, redeemed_at, stopped_after_rolls";

/// SQL (SQLite and PostgreSQL alike) matching a note with two signature
/// lines or more: the log's and a witness's.
pub const COSIGNED_NOTE: &str = "checkpoint LIKE '%— %— %'";

/// The first index from `?4` up with no sale (`?1..?3`: the block): `?4`
/// itself, or one past the first sold unit whose successor is unsold,
/// found by walking the primary key in order in the database.
pub const FIRST_UNSOLD: &str = "
SELECT CASE WHEN NOT EXISTS (
    SELECT 1 FROM sales WHERE game=?1 AND emission=?2 AND block=?3 AND unit_index=?4)
THEN ?4
ELSE (SELECT a.unit_index + 1 FROM sales a
      WHERE a.game=?1 AND a.emission=?2 AND a.block=?3 AND a.unit_index >= ?4
        AND NOT EXISTS (SELECT 1 FROM sales b WHERE b.game=?1 AND b.emission=?2
                        AND b.block=?3 AND b.unit_index = a.unit_index + 1)
      ORDER BY a.unit_index LIMIT 1)
END";
