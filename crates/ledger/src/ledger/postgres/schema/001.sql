-- Version 1 of the schema.
CREATE TABLE redemptions (
    game          TEXT   NOT NULL,
    emission      BIGINT NOT NULL,
    block         BIGINT NOT NULL,
    unit_index    BIGINT NOT NULL,
    unit_id       TEXT   NOT NULL,
    price_cents   BIGINT NOT NULL,
    lot           BIGINT NOT NULL,
    prize_cents   BIGINT NOT NULL,
    record_sha256 TEXT   NOT NULL,
    record        BYTEA  NOT NULL,
    rules_version BIGINT NOT NULL,
    stopped_after_rolls BIGINT,
    redeemed_at   TEXT   NOT NULL,
    seq           BIGINT NOT NULL UNIQUE,
    leaf_hash     BYTEA  NOT NULL,
    PRIMARY KEY (game, emission, block, unit_index)
);
CREATE TABLE block_totals (
    game        TEXT   NOT NULL,
    emission    BIGINT NOT NULL,
    block       BIGINT NOT NULL,
    units       BIGINT NOT NULL,
    paid_cents  BIGINT NOT NULL,
    PRIMARY KEY (game, emission, block)
);
CREATE TABLE log_state (
    one       BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),
    frontier  BYTEA   NOT NULL
);
INSERT INTO log_state (frontier) VALUES ('\x0000000000000000');
CREATE TABLE ledger_heads (
    size        BIGINT PRIMARY KEY,
    root        BYTEA  NOT NULL,
    signed_at   TEXT   NOT NULL,
    checkpoint  TEXT   NOT NULL,
    signer      TEXT   NOT NULL
);
CREATE TABLE claims_ended (
    game        TEXT   NOT NULL,
    emission    BIGINT NOT NULL,
    statement   TEXT   NOT NULL,
    ended_at    TEXT   NOT NULL,
    PRIMARY KEY (game, emission)
);
