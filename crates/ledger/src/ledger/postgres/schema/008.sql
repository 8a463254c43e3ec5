-- Version 8: the operator's actions (issue 25), in the log like the
-- rest (docs/REDEMPTION.md §Suspend, withdraw and void).
CREATE TABLE operator_actions (
    id          BIGSERIAL PRIMARY KEY,
    action      TEXT   NOT NULL,
    game        TEXT   NOT NULL,
    emission    BIGINT NOT NULL,
    block       BIGINT,
    unit_index  BIGINT,
    reason      TEXT   NOT NULL,
    by_name     TEXT   NOT NULL,
    at          TEXT   NOT NULL,
    pending     BIGINT UNIQUE,
    seq         BIGINT UNIQUE,
    leaf_hash   BYTEA
);
CREATE INDEX operator_actions_emission ON operator_actions (game, emission);
CREATE UNIQUE INDEX operator_voids
    ON operator_actions (game, emission, block, unit_index) WHERE action = 'void';
CREATE INDEX operator_actions_queue ON operator_actions (pending) WHERE seq IS NULL;
