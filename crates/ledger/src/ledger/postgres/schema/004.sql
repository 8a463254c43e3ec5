-- Version 4: an end of claims is a log entry (issue 21). Rows published
-- before have no seq until a node adopts them ([`PgStorage::open`]).
ALTER TABLE claims_ended ADD COLUMN seq BIGINT UNIQUE, ADD COLUMN leaf_hash BYTEA;
