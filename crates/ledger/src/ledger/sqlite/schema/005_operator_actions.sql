-- 5: the operator's actions (issue 25; docs/REDEMPTION.md §Suspend,
-- withdraw and void), in the order recorded (`id`); a unit is voided
-- once. In the log beside the rest: the view of every leaf is remade.
CREATE TABLE IF NOT EXISTS operator_actions (
    id          INTEGER PRIMARY KEY,
    action      TEXT    NOT NULL,
    game        TEXT    NOT NULL,
    emission    INTEGER NOT NULL,
    block       INTEGER,
    unit_index  INTEGER,
    reason      TEXT    NOT NULL,
    by_name     TEXT    NOT NULL,
    at          TEXT    NOT NULL,
    seq         INTEGER UNIQUE,
    leaf_hash   BLOB
);
CREATE INDEX IF NOT EXISTS operator_actions_emission ON operator_actions (game, emission);
CREATE UNIQUE INDEX IF NOT EXISTS operator_voids
    ON operator_actions (game, emission, block, unit_index) WHERE action = 'void';
DROP VIEW IF EXISTS log_leaves;
CREATE UNIQUE INDEX IF NOT EXISTS claims_ended_seq ON claims_ended (seq);
CREATE VIEW IF NOT EXISTS log_leaves AS
    SELECT seq, leaf_hash FROM redemptions WHERE seq IS NOT NULL
    UNION ALL SELECT seq, leaf_hash FROM sales
    UNION ALL SELECT seq, leaf_hash FROM plays WHERE seq IS NOT NULL
    UNION ALL SELECT seq, leaf_hash FROM claims_ended WHERE seq IS NOT NULL
    UNION ALL SELECT seq, leaf_hash FROM operator_actions WHERE seq IS NOT NULL;
