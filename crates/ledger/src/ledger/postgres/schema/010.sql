-- Version 10: the log's one signing key (issue 35; docs/DEPLOY.md
-- §Machines and secrets), as a signed-note verifier key: every node signs
-- heads with it. A ledger upgraded keeps its latest head's signer; a new
-- one is claimed by its first node.
ALTER TABLE ledger_identity ADD COLUMN log_key TEXT;
UPDATE ledger_identity SET log_key = (SELECT signer FROM ledger_heads ORDER BY size DESC LIMIT 1);
