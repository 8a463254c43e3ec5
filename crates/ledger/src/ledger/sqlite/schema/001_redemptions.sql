-- 1: redemptions and their blocks' running totals.
CREATE TABLE IF NOT EXISTS redemptions (
    game         TEXT    NOT NULL,
    emission     INTEGER NOT NULL,
    block        INTEGER NOT NULL,
    unit_index   INTEGER NOT NULL,
    unit_id      TEXT    NOT NULL,
    price_cents  INTEGER NOT NULL,
    lot          INTEGER NOT NULL,
    prize_cents  INTEGER NOT NULL,
    record_sha256 TEXT   NOT NULL,
    redeemed_at  TEXT    NOT NULL,
    record       BLOB,
    rules_version INTEGER,
    stopped_after_rolls INTEGER,
    seq          INTEGER,
    leaf_hash    BLOB,
    PRIMARY KEY (game, emission, block, unit_index)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS block_totals (
    game        TEXT    NOT NULL,
    emission    INTEGER NOT NULL,
    block       INTEGER NOT NULL,
    units       INTEGER NOT NULL,
    paid_cents  INTEGER NOT NULL,
    PRIMARY KEY (game, emission, block)
) WITHOUT ROWID;
