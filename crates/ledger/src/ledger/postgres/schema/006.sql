-- Version 6: the log's tree as tiles (docs/REDEMPTION.md §Tiles), filled
-- by the sequencer (from every leaf, once, on a ledger written before).
CREATE TABLE log_tiles (
    level   SMALLINT NOT NULL,
    idx     BIGINT   NOT NULL,
    hashes  BYTEA    NOT NULL,
    PRIMARY KEY (level, idx)
);
