-- Version 5: entries are committed queued and sequenced after (issue
-- 21): a `pending` number from one sequence orders the queue; an entry's
-- `seq` and leaf hash are set by the sequencer. Ends of claims published
-- before they were logged are queued now, oldest first.
CREATE SEQUENCE log_pending;
ALTER TABLE redemptions ADD COLUMN pending BIGINT UNIQUE,
    ALTER COLUMN seq DROP NOT NULL, ALTER COLUMN leaf_hash DROP NOT NULL;
ALTER TABLE sales ADD COLUMN pending BIGINT UNIQUE,
    ALTER COLUMN seq DROP NOT NULL, ALTER COLUMN leaf_hash DROP NOT NULL;
ALTER TABLE plays ADD COLUMN pending BIGINT UNIQUE;
ALTER TABLE claims_ended ADD COLUMN pending BIGINT UNIQUE;
CREATE INDEX redemptions_queue ON redemptions (pending) WHERE seq IS NULL;
CREATE INDEX sales_queue ON sales (pending) WHERE seq IS NULL;
CREATE INDEX plays_queue ON plays (pending) WHERE seq IS NULL;
UPDATE claims_ended SET pending = q.n FROM (
    SELECT game, emission, nextval('log_pending') AS n FROM (
        SELECT game, emission FROM claims_ended WHERE seq IS NULL ORDER BY ended_at, game, emission
    ) o
) q WHERE claims_ended.game = q.game AND claims_ended.emission = q.emission;
