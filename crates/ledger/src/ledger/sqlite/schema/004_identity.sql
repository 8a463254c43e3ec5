-- 4: the ledger's identity (issue 22), a random 128-bit name made once,
-- which the emissions sold through it record.
CREATE TABLE IF NOT EXISTS ledger_identity (id TEXT NOT NULL);
INSERT INTO ledger_identity (id)
    SELECT lower(hex(randomblob(16))) WHERE NOT EXISTS (SELECT 1 FROM ledger_identity);
