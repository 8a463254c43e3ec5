-- Version 3: answers kept under idempotency keys (issue 19). Keys compare
-- bytewise (`COLLATE "C"`), so a batch's keys `KEY#n` are one index range.
CREATE TABLE idempotency (
    key         TEXT COLLATE "C" PRIMARY KEY,
    request     TEXT NOT NULL,
    what        TEXT NOT NULL,
    answer      TEXT NOT NULL,
    kept_at     TEXT NOT NULL
);
