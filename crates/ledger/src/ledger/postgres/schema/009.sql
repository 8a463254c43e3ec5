-- Version 9: each sale's platform lane (issue 34; docs/SECURITY.md §Each
-- platform in its own lane): a sale made before has none, the
-- operator's alone.
ALTER TABLE sales ADD COLUMN lane TEXT;