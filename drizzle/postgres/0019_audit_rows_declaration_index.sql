-- Matches per declared movement (the public declared-movements list, the operators' list, the audit run): a partial
-- index of the rows that matched a declaration, so the count reads them alone. (SQLite:
-- drizzle/0043_audit_rows_declaration_index.sql.)
CREATE INDEX "audit_rows_declaration_idx" ON "audit_rows" ("declaration_id", "run_id") WHERE declaration_id IS NOT NULL;
