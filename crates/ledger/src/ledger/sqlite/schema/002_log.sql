-- 2: the log (issue 11), sales and plays (13), idempotency keys (19),
-- ends of claims and tiles (21). After the columns of `redemptions`
-- added in this version (schema.rs).
CREATE UNIQUE INDEX IF NOT EXISTS redemptions_seq ON redemptions (seq);
CREATE TABLE IF NOT EXISTS ledger_heads (
    size        INTEGER PRIMARY KEY,
    root        BLOB    NOT NULL,
    signed_at   TEXT    NOT NULL,
    checkpoint  TEXT    NOT NULL,
    frontier    BLOB
);
CREATE TABLE IF NOT EXISTS sales (
    game        TEXT    NOT NULL,
    emission    INTEGER NOT NULL,
    block       INTEGER NOT NULL,
    unit_index  INTEGER NOT NULL,
    sold_at     TEXT    NOT NULL,
    seq         INTEGER NOT NULL UNIQUE,
    leaf_hash   BLOB    NOT NULL,
    PRIMARY KEY (game, emission, block, unit_index)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sale_cursor (
    game        TEXT    NOT NULL,
    emission    INTEGER NOT NULL,
    block       INTEGER NOT NULL,
    next_index  INTEGER NOT NULL,
    PRIMARY KEY (game, emission, block)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS plays (
    game        TEXT    NOT NULL,
    emission    INTEGER NOT NULL,
    block       INTEGER NOT NULL,
    unit_index  INTEGER NOT NULL,
    rolls       INTEGER NOT NULL,
    ended       TEXT,
    ended_at    TEXT,
    updated_at  TEXT    NOT NULL,
    seq         INTEGER UNIQUE,
    leaf_hash   BLOB,
    PRIMARY KEY (game, emission, block, unit_index)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS idempotency (
    key         TEXT    PRIMARY KEY,
    request     TEXT    NOT NULL,
    what        TEXT    NOT NULL,
    answer      TEXT    NOT NULL,
    kept_at     TEXT    NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS claims_ended (
    game        TEXT    NOT NULL,
    emission    INTEGER NOT NULL,
    statement   TEXT    NOT NULL,
    ended_at    TEXT    NOT NULL,
    seq         INTEGER,
    leaf_hash   BLOB,
    PRIMARY KEY (game, emission)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS log_tiles (
    level       INTEGER NOT NULL,
    idx         INTEGER NOT NULL,
    hashes      BLOB    NOT NULL,
    PRIMARY KEY (level, idx)
) WITHOUT ROWID;
