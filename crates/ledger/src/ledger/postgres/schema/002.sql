-- Version 2: sales and plays (issue 13), in the log beside redemptions.
CREATE TABLE sales (
    game        TEXT   NOT NULL,
    emission    BIGINT NOT NULL,
    block       BIGINT NOT NULL,
    unit_index  BIGINT NOT NULL,
    sold_at     TEXT   NOT NULL,
    seq         BIGINT NOT NULL UNIQUE,
    leaf_hash   BYTEA  NOT NULL,
    PRIMARY KEY (game, emission, block, unit_index)
);
CREATE TABLE sale_cursor (
    game        TEXT   NOT NULL,
    emission    BIGINT NOT NULL,
    block       BIGINT NOT NULL,
    next_index  BIGINT NOT NULL,
    PRIMARY KEY (game, emission, block)
);
CREATE TABLE plays (
    game        TEXT   NOT NULL,
    emission    BIGINT NOT NULL,
    block       BIGINT NOT NULL,
    unit_index  BIGINT NOT NULL,
    rolls       BIGINT NOT NULL,
    ended       TEXT,
    ended_at    TEXT,
    updated_at  TEXT   NOT NULL,
    seq         BIGINT UNIQUE,
    leaf_hash   BYTEA,
    PRIMARY KEY (game, emission, block, unit_index)
);
