//! Statements and column lists the PostgreSQL driver's files share.

/// [`crate::ledger::columns::FIRST_UNSOLD`] with PostgreSQL's parameters (`$1`
/// for `?1`).
pub(super) static FIRST_UNSOLD: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| crate::ledger::columns::FIRST_UNSOLD.replace('?', "$"));

/// Records a unit once, queued: no row is inserted when its key is there
/// already.
pub(super) const INSERT_REDEMPTION: &str = "
INSERT INTO redemptions (game, emission, block, unit_index, unit_id, price_cents, lot, prize_cents,
    record_sha256, record, rules_version, stopped_after_rolls, redeemed_at, pending)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, nextval('log_pending'))
ON CONFLICT (game, emission, block, unit_index) DO NOTHING RETURNING pending, redeemed_at";

/// [`INSERT_REDEMPTION`] for many rows, one array a column, in the
/// arrays' order.
pub(super) const INSERT_REDEMPTIONS: &str = "
INSERT INTO redemptions (game, emission, block, unit_index, unit_id, price_cents, lot, prize_cents,
    record_sha256, record, rules_version, stopped_after_rolls, redeemed_at, pending)
SELECT g, e, b, i, u, p, l, z, h, r, v, s, a, nextval('log_pending')
FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::text[], $6::bigint[],
            $7::bigint[], $8::bigint[], $9::text[], $10::bytea[], $11::bigint[], $12::bigint[],
            $13::text[]) WITH ORDINALITY AS x(g, e, b, i, u, p, l, z, h, r, v, s, a, n)
ORDER BY n
ON CONFLICT (game, emission, block, unit_index) DO NOTHING RETURNING pending, redeemed_at";

/// Adds units sequenced to their block's running totals.
pub(super) const ADD_TO_TOTALS: &str = "
INSERT INTO block_totals (game, emission, block, units, paid_cents) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (game, emission, block) DO UPDATE
SET units = block_totals.units + excluded.units,
    paid_cents = block_totals.paid_cents + excluded.paid_cents";

/// The current time in the database, as the ledger writes it.
/// Milliseconds, as the SQLite ledger writes them (`strftime('%f')`): the
/// time goes into hashed leaves, so both backends write one format
/// (docs/REDEMPTION.md §Tamper-evident log). Rows written before issue 19
/// keep their microseconds: a leaf is recomputed from the stored text.
pub(super) const NOW: &str =
    "SELECT to_char(date_trunc('milliseconds', clock_timestamp()) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')";

/// The ledger's tables.
pub(super) const LEDGER_TABLES: [&str; 11] = [
    "redemptions",
    "block_totals",
    "log_state",
    "ledger_heads",
    "sales",
    "sale_cursor",
    "plays",
    "idempotency",
    "claims_ended",
    "log_tiles",
    "operator_actions",
];

/// The database's integrity as the ledger can see it without privileges:
/// no checksum failure reported for the database (with data checksums
/// on), and no redemption, sale or end of claims that is neither in the
/// log nor queued for it (a row inserted behind the ledger's back).
pub(super) const INTEGRITY: &str = "SELECT
    COALESCE((SELECT checksum_failures FROM pg_stat_database WHERE datname = current_database()), 0) = 0
    AND NOT EXISTS (SELECT 1 FROM redemptions WHERE seq IS NULL AND pending IS NULL)
    AND NOT EXISTS (SELECT 1 FROM sales WHERE seq IS NULL AND pending IS NULL)
    AND NOT EXISTS (SELECT 1 FROM claims_ended WHERE seq IS NULL AND pending IS NULL)
    AND NOT EXISTS (SELECT 1 FROM operator_actions WHERE seq IS NULL AND pending IS NULL)";

/// The last level-0 tile: how many leaves the tiles cover.
pub(super) const LAST_TILE: &str =
    "SELECT idx, hashes FROM log_tiles WHERE level = 0 ORDER BY idx DESC LIMIT 1";

/// Entries queued for the sequencer.
pub(super) const QUEUED: &str = "SELECT
    (SELECT COUNT(*) FROM redemptions WHERE seq IS NULL AND pending IS NOT NULL)
  + (SELECT COUNT(*) FROM sales WHERE seq IS NULL AND pending IS NOT NULL)
  + (SELECT COUNT(*) FROM plays WHERE seq IS NULL AND pending IS NOT NULL)
  + (SELECT COUNT(*) FROM claims_ended WHERE seq IS NULL AND pending IS NOT NULL)
  + (SELECT COUNT(*) FROM operator_actions WHERE seq IS NULL AND pending IS NOT NULL)";

/// [`crate::ledger::operator::COLUMNS`], its numbers read as PostgreSQL's BIGINT.
pub(super) const OPERATOR_COLUMNS: &str = crate::ledger::operator::COLUMNS;

/// The head columns, as read back.
pub(super) const HEAD_COLUMNS: &str = "size, root, signed_at, checkpoint, signer";

/// A unit's sale row.
pub(super) const SALE_ROW: &str =
    "SELECT sold_at, lane FROM sales WHERE game=$1 AND emission=$2 AND block=$3 AND unit_index=$4";

/// The [`crate::ledger::ops::SaleRow`] of a row of [`SALE_ROW`].
pub(super) fn sale_row(r: &postgres::Row) -> crate::ledger::ops::SaleRow {
    crate::ledger::ops::SaleRow {
        sold_at: r.get(0),
        lane: r.get(1),
    }
}
