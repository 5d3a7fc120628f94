-- Matches per declared movement (the public GET /transparency/audit-anomalies/declared-movements.json, the operators'
-- list, the audit run): a partial index of the rows that matched a declaration, so the count reads them alone and not
-- every row of every complete run (119 ms of /healthz stall at 200,000 rows, 1,286 ms at 2,000,000 before).
-- (PostgreSQL: drizzle/postgres/0019_audit_rows_declaration_index.sql.)
CREATE INDEX `audit_rows_declaration_idx` ON `audit_rows` (`declaration_id`,`run_id`) WHERE declaration_id IS NOT NULL;
