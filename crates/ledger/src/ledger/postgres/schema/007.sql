-- Version 7: the ledger's identity (issue 22), which the emissions sold
-- through it record (docs/REDEMPTION.md §One ledger per emission).
CREATE TABLE ledger_identity (id TEXT NOT NULL);
INSERT INTO ledger_identity (id) VALUES (replace(gen_random_uuid()::text, '-', ''));
