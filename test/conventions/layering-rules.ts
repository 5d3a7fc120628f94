import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

/**
 * The layering of docs/design.md §1 as a function over a source tree, so that test/conventions/layering.test.ts can run it on
 * src/ and on planted trees (a test of the test). What it sees:
 * - import cycles between files, and between domains (a domain is a top folder of src/ that is not a shared room);
 * - an import loop between shared rooms (the folders of SHARED), through two rooms or more (http/ importing auth/
 *   while auth/ imports http/): the shared rooms are layers — config/ and client/ at the bottom, then db/, http/,
 *   auth/, console/, with cli/ and workers/ composing on top — each importing only rooms below it. The top-level
 *   files are not rooms: context.ts carries every shared service and names their types, which take it;
 * - route files — every file that builds `new Elysia(`, whatever its name — importing drizzle or a tables.ts;
 * - a domain's admin/ folder is its outer layer: no file of the domain outside admin/ imports it (what players
 *   read lives in the core; the operator's routes depend on it, never the reverse);
 * - one domain reaching another other than through its service (`service.ts`, `*-service.ts`) or model files,
 *   or tables to tables for foreign keys;
 * - the shared layers below the domains (BELOW_DOMAINS_*) importing a domain;
 * - SQL text naming a table that another domain owns — the owner is the domain whose tables.ts declares it:
 *   a write (INSERT, UPDATE, DELETE, REPLACE) is always refused, a read (FROM, JOIN) only with an allow-list
 *   entry giving its reason (a read model);
 * - a table created by a migration that no tables.ts declares and no owner is named for.
 * Import specifiers are resolved as TypeScript does: `./x`, `./x.ts`, `./x.js`, `./dir` (index.ts).
 *
 * Where a console page lives, one rule: beside the area it shows — a domain's page in the domain's folder
 * (src/webhooks/dead-letters-page.ts), an ops area's in src/ops/<area>/ (src/ops/backups/backups-page.ts) — and in
 * src/console/ only the console's own: its kit and frame, its door (sign-in) and the pages about shared rooms, which
 * sit below the console and draw nothing (auth's partner keys, the configuration). The loop rule holds the second
 * half: a shared room that drew a page would import console/, which imports it.
 */

/** Folders every domain may import: the shared rooms, not domains. */
// console/: the operator console — consoleRoute and the frame every page is drawn with, above auth/ (its guard).
// workers/: the worker entries that compose several rooms, as app.ts composes their routes: the read worker, whose
// task list composes the domains' read tasks (read-tasks.ts), and the OpenAPI build over the whole app. Started by
// path (src/worker-entry.ts), imported by none.
export const SHARED = new Set(["config", "http", "auth", "console", "db", "jobs", "types", "cli", "client", "solana", "workers"]);
/** Top-level modules every domain may import. */
export const SHARED_FILES = new Set(["context.ts", "clock.ts", "log.ts", "worker-entry.ts", "bootstrap.ts", "app.ts", "main.ts"]);
/** The shared rooms and files that compose nothing: they import no domain (app, bootstrap, main, cli and workers compose domains). */
const BELOW_DOMAINS_FOLDERS = new Set(["config", "http", "auth", "console", "db", "jobs", "types", "client", "solana"]);
const BELOW_DOMAINS_FILES = new Set(["context.ts", "clock.ts", "log.ts", "worker-entry.ts"]);

export interface ReadAllowance {
  /** The reading file, relative to src/. */
  file: string;
  table: string;
  reason: string;
}

export interface LayeringOptions {
  /** Reads of another domain's table that are a read model on purpose. */
  allowReads?: readonly ReadAllowance[];
  /** Owners of tables that only a migration creates (triggers and the like drizzle cannot declare): table → domain. */
  migrationOwners?: Readonly<Record<string, string>>;
  /** The migrations folder (CREATE TABLE statements); omitted: no unowned-table check. */
  migrations?: string;
}

export interface LayeringReport {
  fileCycles: string[];
  domainCycles: string[];
  /** Loops between shared rooms, each with the import that makes each step: `http → auth → http (…)`. */
  sharedRoomCycles: string[];
  routeFilesWithSql: string[];
  crossDomainImports: string[];
  coreImportsAdmin: string[];
  sharedImportsDomain: string[];
  foreignWrites: string[];
  foreignReads: string[];
  unownedTables: string[];
  /** Allow-list entries that matched nothing (stale entries hide nothing and are refused too). */
  unusedAllowances: string[];
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : path.endsWith(".ts") && !path.endsWith(".d.ts") ? [path] : [];
  });
}

const IMPORT = /^\s*(?:import|export)\s[^;]*?from\s+"([^"]+)"|^\s*import\s+"([^"]+)"|\bimport\(\s*"([^"]+)"\s*\)/gm;

function importsOf(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(IMPORT)) out.push(m[1] ?? m[2] ?? m[3]!);
  return out;
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** A relative specifier to its file: `./x` → x.ts, `./x.js` → x.ts, `./dir` → dir/index.ts; null for packages. */
export function resolveLocal(from: string, spec: string): string | null {
  if (!spec.startsWith(".")) return null;
  const base = resolve(dirname(from), spec);
  const candidates = [`${base}.ts`, base.endsWith(".js") ? `${base.slice(0, -3)}.ts` : null, join(base, "index.ts"), base];
  for (const c of candidates) if (c && isFile(c)) return c;
  return null;
}

/** The file without its comment lines (`//`, and ` * ` inside block comments), so prose never reads as SQL. */
const codeOnly = (text: string) =>
  text
    .split("\n")
    .filter((l) => !/^\s*(\/\/|\/?\*)/.test(l))
    .join("\n");

// Writes in any case (`delete from x`) and schema-qualified (`main.x`, `"public"."x"`): a write is never allowed, so
// the net is wide. Reads stay upper case: "from" in an error message is prose, and a read has an allow-list anyway.
const WRITE =
  /\b(?:INSERT\s+(?:OR\s+[A-Z]+\s+)?INTO|REPLACE\s+INTO|UPDATE(?:\s+OR\s+[A-Z]+)?|DELETE\s+FROM)\s+(?:[`"]?[a-z_][a-z0-9_]*[`"]?\.)?[`"]?([a-z_][a-z0-9_]*)/gi;
const READ = /\b(?:FROM|JOIN)\s+(?:[`"]?[a-z_][a-z0-9_]*[`"]?\.)?[`"]?([a-z_][a-z0-9_]*)/g;

function cyclesOf(nodes: Iterable<string>, edges: (n: string) => Iterable<string>): string[] {
  const cycles: string[] = [];
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (n: string) => {
    state.set(n, "open");
    stack.push(n);
    for (const to of edges(n)) {
      if (state.get(to) === "open") cycles.push([...stack.slice(stack.indexOf(to)), to].join(" → "));
      else if (!state.has(to)) visit(to);
    }
    stack.pop();
    state.set(n, "done");
  };
  for (const n of nodes) if (!state.has(n)) visit(n);
  return cycles;
}

export function checkLayering(src: string, options: LayeringOptions = {}): LayeringReport {
  const root = resolve(src);
  const files = walk(root);
  const texts = new Map(files.map((f) => [f, readFileSync(f, "utf8")]));
  const rel = (f: string) => relative(root, f);
  const domainOf = (f: string) => (rel(f).includes("/") ? rel(f).split("/")[0]! : null);
  const isDomain = (d: string | null): d is string => d !== null && !SHARED.has(d);
  const resolved = new Map(files.map((f) => [f, importsOf(texts.get(f)!).map((spec) => ({ spec, to: resolveLocal(f, spec) }))]));

  // Owners: the domain (or shared layer) whose tables.ts declares each table.
  const owner = new Map<string, string>(Object.entries(options.migrationOwners ?? {}));
  for (const f of files.filter((f) => f.endsWith("/tables.ts"))) {
    for (const m of texts.get(f)!.matchAll(/sqliteTable\(\s*"([a-z0-9_]+)"/g)) owner.set(m[1]!, domainOf(f) ?? rel(f));
  }

  const report: LayeringReport = {
    fileCycles: cyclesOf(files, (f) => resolved.get(f)!.flatMap((i) => (i.to && texts.has(i.to) ? [i.to] : []))).map((c) =>
      c
        .split(" → ")
        .map((f) => rel(f))
        .join(" → "),
    ),
    domainCycles: [],
    sharedRoomCycles: [],
    routeFilesWithSql: [],
    crossDomainImports: [],
    coreImportsAdmin: [],
    sharedImportsDomain: [],
    foreignWrites: [],
    foreignReads: [],
    unownedTables: [],
    unusedAllowances: [],
  };

  const domainEdges = new Map<string, Set<string>>();
  // Shared room → shared room, with the first import (in walk order) that makes the edge, to name in a report.
  const roomEdges = new Map<string, Map<string, string>>();
  for (const [f, imports] of resolved) {
    const from = domainOf(f);
    const name = rel(f).split("/").pop()!;
    const isRouteFile = /(^|-)routes\.ts$/.test(name) || /\bnew Elysia\(/.test(texts.get(f)!);
    const belowDomains = (from !== null && BELOW_DOMAINS_FOLDERS.has(from)) || (from === null && BELOW_DOMAINS_FILES.has(name));
    for (const { spec, to } of imports) {
      if (isRouteFile && (spec.startsWith("drizzle-orm") || to?.endsWith("/tables.ts"))) report.routeFilesWithSql.push(`${rel(f)} imports ${spec}`);
      if (!to?.startsWith(root) || !texts.has(to)) continue;
      const target = domainOf(to);
      if (belowDomains && isDomain(target)) report.sharedImportsDomain.push(`${rel(f)} → ${rel(to)}`);
      if (from !== null && target !== null && from !== target && SHARED.has(from) && SHARED.has(target)) {
        if (!roomEdges.has(from)) roomEdges.set(from, new Map());
        if (!roomEdges.get(from)!.has(target)) roomEdges.get(from)!.set(target, `${rel(f)} → ${rel(to)}`);
      }
      if (from !== null && target === from && rel(to).startsWith(`${from}/admin/`) && !rel(f).startsWith(`${from}/admin/`)) {
        report.coreImportsAdmin.push(`${rel(f)} → ${rel(to)}`);
      }
      if (!isDomain(from) || !isDomain(target) || target === from) continue;
      if (!domainEdges.has(from)) domainEdges.set(from, new Set());
      domainEdges.get(from)!.add(target);
      const file = rel(to).split("/").pop()!;
      const tablesToTables = file === "tables.ts" && name === "tables.ts";
      if (!/(^|-)(service|model)\.ts$/.test(file) && !tablesToTables) report.crossDomainImports.push(`${rel(f)} → ${rel(to)}`);
    }
  }
  report.domainCycles = cyclesOf(domainEdges.keys(), (d) => domainEdges.get(d) ?? []);
  report.sharedRoomCycles = cyclesOf([...roomEdges.keys()].sort(), (r) => [...(roomEdges.get(r)?.keys() ?? [])].sort()).map((c) => {
    const rooms = c.split(" → ");
    const steps = rooms.slice(1).map((to, i) => roomEdges.get(rooms[i]!)!.get(to)!);
    return `${c} (${steps.join("; ")})`;
  });

  const allowances = options.allowReads ?? [];
  const used = new Set<ReadAllowance>();
  for (const f of files) {
    if (f.endsWith("/tables.ts")) continue;
    const mine = domainOf(f) ?? rel(f);
    const code = codeOnly(texts.get(f)!);
    const writes = new Set<string>();
    for (const m of code.matchAll(WRITE)) {
      const table = m[1]!.toLowerCase();
      const o = owner.get(table);
      if (o === undefined || o === mine) continue;
      writes.add(table);
    }
    for (const table of writes) report.foreignWrites.push(`${rel(f)} writes ${table} (owned by ${owner.get(table)})`);
    const reads = new Set<string>();
    for (const m of code.matchAll(READ)) {
      const table = m[1]!;
      const o = owner.get(table);
      if (o === undefined || o === mine || writes.has(table)) continue;
      reads.add(table);
    }
    for (const table of reads) {
      const allowance = allowances.find((a) => a.file === rel(f) && a.table === table);
      if (allowance) used.add(allowance);
      else report.foreignReads.push(`${rel(f)} reads ${table} (owned by ${owner.get(table)})`);
    }
  }
  report.unusedAllowances = allowances.filter((a) => !used.has(a)).map((a) => `${a.file} reads ${a.table}`);

  if (options.migrations) {
    // A table a later migration drops (and nothing creates again) needs no owner: only the tables that exist after
    // every migration do. Migrations apply in name order; RENAME TO makes a table as CREATE does.
    const created = new Map<string, string>();
    for (const name of readdirSync(options.migrations)
      .filter((n) => n.endsWith(".sql"))
      .sort()) {
      const sql = readFileSync(join(options.migrations, name), "utf8");
      for (const m of sql.matchAll(
        /CREATE TABLE (?:IF NOT EXISTS )?[`"]?([a-z0-9_]+)|DROP TABLE (?:IF EXISTS )?[`"]?([a-z0-9_]+)|RENAME TO [`"]?([a-z0-9_]+)/g,
      )) {
        if (m[1]) created.set(m[1], name);
        else if (m[2]) created.delete(m[2]);
        else if (m[3]) created.set(m[3], name);
      }
    }
    for (const [table, name] of created) if (!table.startsWith("__") && !owner.has(table)) report.unownedTables.push(`${table} (${name})`);
  }
  return report;
}
