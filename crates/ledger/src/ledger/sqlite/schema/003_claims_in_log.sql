-- 3: ends of claims in the log (issue 21): the view of every leaf is
-- remade with them.
DROP VIEW IF EXISTS log_leaves;
CREATE UNIQUE INDEX IF NOT EXISTS claims_ended_seq ON claims_ended (seq);
CREATE VIEW IF NOT EXISTS log_leaves AS
    SELECT seq, leaf_hash FROM redemptions WHERE seq IS NOT NULL
    UNION ALL SELECT seq, leaf_hash FROM sales
    UNION ALL SELECT seq, leaf_hash FROM plays WHERE seq IS NOT NULL
    UNION ALL SELECT seq, leaf_hash FROM claims_ended WHERE seq IS NOT NULL;
