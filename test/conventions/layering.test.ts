import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

/**
 * STYLE.md's layering, checked on the import graph of src/ (type imports included: a type-only cycle still
 * ties the modules' meaning together):
 * - no import cycles;
 * - a domain's routes.ts (and *-routes.ts) never imports drizzle or any tables.ts: SQL stays in services;
 * - one domain reaches another only through that domain's service (service.ts or a *-service.ts verb file),
 *   its model files for shared schemas, or — tables to tables — for foreign keys. `client/` is the partner SDK,
 *   a library every domain may use.
 */
const SRC = resolve(import.meta.dir, "../../src");

/** Folders every domain may import: the shared layers, not domains. */
const SHARED = new Set(["http", "auth", "db", "jobs", "types", "cli", "client"]);
/** Top-level modules every domain may import. */
const SHARED_FILES = new Set(["config.ts", "config-vars.ts", "context.ts", "clock.ts", "log.ts", "bootstrap.ts", "app.ts", "main.ts"]);

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : path.endsWith(".ts") && !path.endsWith(".d.ts") ? [path] : [];
  });
}

const IMPORT = /^\s*(?:import|export)\s[^;]*?from\s+"([^"]+)"|^\s*import\s+"([^"]+)"/gm;

function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const out: string[] = [];
  for (const m of text.matchAll(IMPORT)) out.push(m[1] ?? m[2]!);
  return out;
}

function resolveLocal(from: string, spec: string): string | null {
  if (!spec.startsWith(".")) return null;
  const base = resolve(dirname(from), spec);
  for (const candidate of [`${base}.ts`, join(base, "index.ts"), base]) {
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {}
  }
  return null;
}

const files = walk(SRC);
const graph = new Map(files.map((f) => [f, importsOf(f)]));
const rel = (f: string) => relative(SRC, f);
const domainOf = (f: string) => (rel(f).includes("/") ? rel(f).split("/")[0]! : null);

describe("layering of src/", () => {
  test("no import cycles", () => {
    const cycles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const stack: string[] = [];
    const visit = (f: string) => {
      state.set(f, "open");
      stack.push(f);
      for (const spec of graph.get(f) ?? []) {
        const to = resolveLocal(f, spec);
        if (!to || !graph.has(to)) continue;
        if (state.get(to) === "open") cycles.push([...stack.slice(stack.indexOf(to)), to].map(rel).join(" → "));
        else if (!state.has(to)) visit(to);
      }
      stack.pop();
      state.set(f, "done");
    };
    for (const f of files) if (!state.has(f)) visit(f);
    expect(cycles).toEqual([]);
  });

  test("routes files never import drizzle or tables.ts", () => {
    const bad: string[] = [];
    for (const [f, specs] of graph) {
      if (!/(^|-)routes\.ts$/.test(f.split("/").pop()!)) continue;
      for (const spec of specs) if (spec.startsWith("drizzle-orm") || /(^|\/)tables$/.test(spec.replace(/\.ts$/, ""))) bad.push(`${rel(f)} imports ${spec}`);
    }
    expect(bad).toEqual([]);
  });

  test("a domain reaches another only through its service.ts or model.ts", () => {
    const bad: string[] = [];
    for (const [f, specs] of graph) {
      const from = domainOf(f);
      if (!from || SHARED.has(from)) continue;
      for (const spec of specs) {
        const to = resolveLocal(f, spec);
        if (!to) continue;
        const target = domainOf(to);
        if (!target || target === from || SHARED.has(target) || SHARED_FILES.has(rel(to))) continue;
        if (!to.startsWith(SRC)) continue; // package.json and the like
        const file = rel(to).split("/").pop()!;
        const tablesToTables = file === "tables.ts" && rel(f).endsWith("/tables.ts");
        if (!/(^|-)(service|model)\.ts$/.test(file) && !tablesToTables) bad.push(`${rel(f)} → ${rel(to)}`);
      }
    }
    expect(bad).toEqual([]);
  });
});
