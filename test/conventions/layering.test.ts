import { afterAll, describe, expect, test } from "bun:test";
import { Glob } from "bun";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { checkLayering, type ReadAllowance } from "./layering-rules";

/**
 * The layering of docs/design.md §1, checked on src/ by test/conventions/layering-rules.ts (what it sees is listed there), and
 * the checker itself checked on planted trees: each kind of violation, planted once, must be reported.
 */
const SRC = resolve(import.meta.dir, "../../src");
const MIGRATIONS = resolve(import.meta.dir, "../../drizzle");

/** Tables only a migration creates (drizzle cannot declare their triggers), with their owner. */
const MIGRATION_OWNERS = { partner_keys_version: "auth" };

const reads = (file: string, tables: string[], reason: string): ReadAllowance[] => tables.map((table) => ({ file, table, reason }));

/**
 * Reads of another domain's tables that are read models on purpose, each with its reason. Writes have no such
 * list: only the owner writes its tables (the sandbox reset asks each owner to clear its rows).
 */
const ALLOW_READS: ReadAllowance[] = [
  ...reads(
    "sandbox/store.ts",
    [
      "request_log",
      "request_log_keys",
      "idempotency_records",
      "salutes_ledger",
      "webhook_deliveries",
      "partner_users",
      "wallet_links",
      "partner_keys",
      "events",
      "webhooks",
    ],
    "the sandbox's read models: the promotion checklist's counts across every domain, the fixture summary's users, the event log and the simulator's view of the partner's sandbox deliveries",
  ),
  ...reads("ops/readiness/store.ts", ["request_log_hourly"], "the 403 noise export reads the request log's hourly rollups"),
  ...reads("ops/digest/store.ts", ["request_log_403_hourly", "request_log_hourly"], "the 403 digest reads the request log's hourly rollups"),
  ...reads("ops/incidents/store.ts", ["request_log", "job_runs"], "the incident draft quotes the errors and failed jobs of an incident's span"),
  ...reads(
    "cli/migrate-to-postgres.ts",
    ["salutes_ledger", "salutes_balances"],
    "the move checks the money after copying: every balance = Σ its ledger on both sides, and the same on both",
  ),
  ...reads("auth/master-key-check.ts", ["webhooks", "status_subscribers"], "the master key check opens one sealed secret of each kind at start"),
  ...reads(
    "transparency/store/chain-inputs.ts",
    ["chain_transactions", "chain_token_snapshots", "chain_sync_runs", "chain_mint_authority_snapshots"],
    "the audit's inputs are the chain domain's snapshots, read in one consistent transaction",
  ),
  ...reads("chain/store/job-runs.ts", ["job_runs"], "chain freshness is the age and failures of its sync jobs"),
  ...reads("status/store/read-models.ts", ["request_log"], "the request_errors check reads the recent error rate"),
  ...reads(
    "status/store/read-models.ts",
    ["audit_runs"],
    "the audit_anomalies check reads the newest complete run; importing transparency would close a cycle",
  ),
  ...reads("status/store/read-models.ts", ["job_runs"], "the reliability check reads 90 days of job runs"),
  ...reads("messenger/store/read-models.ts", ["request_log"], "the rollout checklist looks for mini-app traffic"),
  ...reads("messenger/store/read-models.ts", ["admin_audit"], "a manual grant's request id is checked against the audit trail"),
];

describe("layering of src/", () => {
  const report = checkLayering(SRC, { allowReads: ALLOW_READS, migrationOwners: MIGRATION_OWNERS, migrations: MIGRATIONS });
  test("no import cycles between files", () => expect(report.fileCycles).toEqual([]));
  test("no import cycles between domains", () => expect(report.domainCycles).toEqual([]));
  test("no import loop between shared rooms (each imports only the rooms below it)", () => expect(report.sharedRoomCycles).toEqual([]));
  test("route files (every file that builds new Elysia) never import drizzle or a tables.ts", () => expect(report.routeFilesWithSql).toEqual([]));
  test("a domain reaches another only through its service or model files", () => expect(report.crossDomainImports).toEqual([]));
  test("the shared layers below the domains import no domain", () => expect(report.sharedImportsDomain).toEqual([]));
  test("a domain's core never imports its admin/ folder", () => expect(report.coreImportsAdmin).toEqual([]));
  test("only a table's owner writes it", () => expect(report.foreignWrites).toEqual([]));
  test("another domain's table is read only through the allow-list, whose every entry is used", () => {
    expect(report.foreignReads).toEqual([]);
    expect(report.unusedAllowances).toEqual([]);
  });
  test("every table a migration creates has an owner", () => expect(report.unownedTables).toEqual([]));
});

describe("the checker sees each violation (planted trees)", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  /** A tree of files (path → text) under a fresh temp dir; returns its root. */
  function plant(files: Record<string, string>): string {
    const root = mkdtempSync(join(tmpdir(), "herald-layering-"));
    dirs.push(root);
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    return root;
  }

  const base = {
    "context.ts": "export interface AppContext {}\n",
    "alpha/tables.ts": 'import { sqliteTable } from "drizzle-orm/sqlite-core";\nexport const a = sqliteTable("alpha_rows", {});\n',
    "beta/tables.ts": 'import { sqliteTable } from "drizzle-orm/sqlite-core";\nexport const b = sqliteTable(\n  "beta_rows",\n  {},\n);\n',
    "alpha/service.ts": "export const one = 1;\n",
    "beta/service.ts": "export const two = 2;\n",
  };

  test("a clean tree reports nothing", () => {
    const r = checkLayering(plant(base));
    expect(Object.values(r).flat()).toEqual([]);
  });

  test("a file cycle through .js specifiers", () => {
    const r = checkLayering(
      plant({
        ...base,
        "alpha/x.ts": 'import { y } from "./y.js";\nexport const x = 1;\n',
        "alpha/y.ts": 'import { x } from "./x.js";\nexport const y = 1;\n',
      }),
    );
    expect(r.fileCycles).toHaveLength(1);
    expect(new Set(r.fileCycles[0]!.split(" → "))).toEqual(new Set(["alpha/x.ts", "alpha/y.ts"]));
  });

  test("a domain cycle made of allowed service imports", () => {
    const r = checkLayering(
      plant({
        ...base,
        "alpha/service.ts": 'import { two } from "../beta/service";\nexport const one = two;\n',
        "beta/other.ts": 'import { one } from "../alpha/service";\nexport const z = one;\n',
      }),
    );
    expect(r.domainCycles).toHaveLength(1);
    expect(new Set(r.domainCycles[0]!.split(" → "))).toEqual(new Set(["alpha", "beta"]));
    expect(r.crossDomainImports).toEqual([]);
  });

  test("a loop between two shared rooms, though no file cycle closes it; one way is fine", () => {
    const loop = checkLayering(
      plant({
        ...base,
        "http/core.ts": "export const core = 1;\n",
        "http/routes/mount.ts": 'import { actor } from "../../auth/actors";\nexport const mount = actor;\n',
        "auth/actors.ts": "export const actor = 1;\n",
        "auth/guard.ts": 'import { core } from "../http/core.js";\nexport const guard = core;\n',
      }),
    );
    expect(loop.fileCycles).toEqual([]);
    expect(loop.sharedRoomCycles).toEqual(["auth → http → auth (auth/guard.ts → http/core.ts; http/routes/mount.ts → auth/actors.ts)"]);
    const oneWay = checkLayering(
      plant({ ...base, "http/core.ts": "export const core = 1;\n", "auth/guard.ts": 'import { core } from "../http/core";\nexport const guard = core;\n' }),
    );
    expect(oneWay.sharedRoomCycles).toEqual([]);
  });

  test("a loop through three shared rooms", () => {
    const r = checkLayering(
      plant({
        ...base,
        "db/port.ts": 'import { entry } from "../workers/spawn";\nexport const port = entry;\n',
        "http/core.ts": 'import { port } from "../db/port";\nexport const core = port;\n',
        "workers/spawn.ts": "export const entry = 1;\n",
        "workers/read-tasks.ts": 'import { core } from "../http/core";\nexport const tasks = core;\n',
      }),
    );
    expect(r.fileCycles).toEqual([]);
    expect(r.sharedRoomCycles).toEqual([
      "db → workers → http → db (db/port.ts → workers/spawn.ts; workers/read-tasks.ts → http/core.ts; http/core.ts → db/port.ts)",
    ]);
  });

  test("a file that builds new Elysia, whatever its name, importing a tables.ts", () => {
    const r = checkLayering(
      plant({ ...base, "alpha/page.ts": 'import { Elysia } from "elysia";\nimport { a } from "./tables";\nexport const p = new Elysia();\n' }),
    );
    expect(r.routeFilesWithSql).toEqual(["alpha/page.ts imports ./tables"]);
  });

  test("a domain importing another's internals", () => {
    const r = checkLayering(
      plant({ ...base, "beta/inner.ts": "export const i = 1;\n", "alpha/x.ts": 'import { i } from "../beta/inner";\nexport const x = i;\n' }),
    );
    expect(r.crossDomainImports).toEqual(["alpha/x.ts → beta/inner.ts"]);
  });

  test("a domain's core importing its admin/ folder (admin importing the core is the right way round)", () => {
    const r = checkLayering(
      plant({
        ...base,
        "alpha/admin/rules.ts": 'import { one } from "../service";\nexport const rules = one;\n',
        "alpha/wheel.ts": 'import { rules } from "./admin/rules.js";\nexport const w = rules;\n',
      }),
    );
    expect(r.coreImportsAdmin).toEqual(["alpha/wheel.ts → alpha/admin/rules.ts"]);
  });

  test("a shared layer importing a domain (context.ts, http/)", () => {
    const r = checkLayering(
      plant({
        ...base,
        "context.ts": 'import type { one } from "./alpha/service";\nexport type T = typeof one;\n',
        "http/core.ts": 'import { two } from "../beta/service";\nexport const c = two;\n',
      }),
    );
    expect(r.sharedImportsDomain.sort()).toEqual(["context.ts → alpha/service.ts", "http/core.ts → beta/service.ts"]);
  });

  test("SQL writing another domain's table, in any form; prose in comments is not SQL", () => {
    const r = checkLayering(
      plant({
        ...base,
        "alpha/x.ts": [
          "// We never DELETE FROM beta_rows here.",
          'export const q1 = "INSERT OR IGNORE INTO beta_rows (id) VALUES (?)";',
          "export const q2 = `UPDATE beta_rows SET n = n + 1`;",
          'export const q3 = "DELETE FROM alpha_rows";',
        ].join("\n"),
        "alpha/lower.ts": 'export const q = "delete from beta_rows where id = ?";\n',
        "alpha/qualified.ts": 'export const q = `UPDATE main."beta_rows" SET n = 0`;\n',
      }),
    );
    expect([...r.foreignWrites].sort()).toEqual([
      "alpha/lower.ts writes beta_rows (owned by beta)",
      "alpha/qualified.ts writes beta_rows (owned by beta)",
      "alpha/x.ts writes beta_rows (owned by beta)",
    ]);
    expect(r.foreignReads).toEqual([]);
  });

  test("a read of another domain's table: refused without an allowance, accepted with one; a stale allowance is refused", () => {
    const files = { ...base, "alpha/x.ts": 'export const q = "SELECT count(*) FROM alpha_rows a JOIN beta_rows b ON b.id = a.id";\n' };
    expect(checkLayering(plant(files)).foreignReads).toEqual(["alpha/x.ts reads beta_rows (owned by beta)"]);
    const allowed = checkLayering(plant(files), { allowReads: [{ file: "alpha/x.ts", table: "beta_rows", reason: "a read model" }] });
    expect(allowed.foreignReads).toEqual([]);
    const stale = checkLayering(plant(base), { allowReads: [{ file: "alpha/x.ts", table: "beta_rows", reason: "a read model" }] });
    expect(stale.unusedAllowances).toEqual(["alpha/x.ts reads beta_rows"]);
  });

  test("a table a migration creates that nobody declares", () => {
    const root = plant({ ...base, "../drizzle/0001_x.sql": "CREATE TABLE `gamma_rows` (id integer);\nCREATE TABLE `alpha_rows` (id integer);\n" });
    expect(checkLayering(root, { migrations: join(root, "../drizzle") }).unownedTables).toEqual(["gamma_rows (0001_x.sql)"]);
  });
});

// docs/design.md §8a: the engines are reached through the storage port, so no module outside src/db/ imports
// bun:sqlite or Bun's SQL (the CLI's own SQLite checks: sqlite-file.ts; the read worker's connections: sqlite-worker.ts).
test("no module outside src/db/ imports bun:sqlite or Bun's SQL", () => {
  const offenders: string[] = [];
  for (const file of new Glob("**/*.ts").scanSync(SRC)) {
    if (file.startsWith("db/")) continue;
    const text = readFileSync(join(SRC, file), "utf8");
    if (/from\s+["']bun:sqlite["']|import\(\s*["']bun:sqlite["']\s*\)/.test(text)) offenders.push(`${file}: bun:sqlite`);
    if (/import\s*\{[^}]*\bSQL\b[^}]*\}\s*from\s*["']bun["']|\bBun\.SQL\b/.test(text)) offenders.push(`${file}: Bun's SQL`);
  }
  expect(offenders.sort()).toEqual([]);
});
