// The docs and the served API cannot drift apart (issue 16, item 12), checked in both directions:
// - every operation of /api/openapi.json and of /api/openapi-transparency.yaml is named in README.md or a page
//   under docs/ by its path in OpenAPI form (`/api/partner/webhooks/{webhook_id}`; `:webhook_id` is accepted),
//   and an operation other than GET on a line that also names its method;
// - every route the docs name with a method (`POST /api/salutes/credit` in prose, headings, tables with a
//   method column, JSON strings, HTTP request lines) exists in the document with that method.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import YAML from "yaml";
import { createTestApp, type TestApp } from "../support/app";
import { documentationFiles } from "./markdown";

const METHODS = ["get", "post", "put", "patch", "delete"] as const;

/**
 * Request lines in the docs that are not Herald's routes: what Herald itself sends to a partner's receiver.
 * Each entry says where it comes from; keep the list short and specific.
 */
const NOT_HERALD_ROUTES = new Set([
  "POST /webhooks/herald", // docs/webhooks.md: a delivery as the partner's receiver sees it
]);

interface Operation {
  method: string;
  path: string;
}

function operationsOf(doc: { paths?: Record<string, Record<string, unknown>> }): Operation[] {
  return Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m] !== undefined).map((m) => ({ method: m.toUpperCase(), path })),
  );
}

let h: TestApp;
let main: Operation[];
let transparency: Operation[];
const docs = documentationFiles().map(([file, text]) => ({
  file,
  // `:name` path parameters read as `{name}`, so both spellings count.
  lines: text.split("\n").map((l) => l.replace(/\/:([A-Za-z_][A-Za-z0-9_]*)/g, "/{$1}")),
}));

beforeAll(async () => {
  h = createTestApp();
  const json = await h.request("/api/openapi.json");
  expect(json.status).toBe(200);
  main = operationsOf((await json.json()) as Parameters<typeof operationsOf>[0]);
  const yaml = await h.request("/api/openapi-transparency.yaml");
  expect(yaml.status).toBe(200);
  transparency = operationsOf(YAML.parse(await yaml.text()));
});
afterAll(() => h.close());

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The path as a whole word: not followed by more path (`/users` is not `/users/{user_id}` nor `/users.csv`). */
const pathPattern = (path: string) => new RegExp(`${escape(path)}(?![A-Za-z0-9_{}/-]|\\.[A-Za-z0-9])`);

/** Where an operation is named: a line with its path, and for anything but GET, its method on that line too. */
function mentions(op: Operation): string[] {
  const re = pathPattern(op.path);
  const method = new RegExp(`\\b${op.method}\\b`);
  const where: string[] = [];
  for (const { file, lines } of docs) {
    lines.forEach((line, i) => {
      if (re.test(line) && (op.method === "GET" || method.test(line))) where.push(`${file}:${i + 1}`);
    });
  }
  return where;
}

function undocumented(ops: Operation[]): string[] {
  return ops.filter((op) => mentions(op).length === 0).map((op) => `${op.method} ${op.path}`);
}

/**
 * `METHOD /path` as the docs write it: `GET /x`, `` `POST /x` ``, `**GET /x**`, and `| POST | `/x` |` in a table
 * with a method column. The path ends at a space, a quote, a backtick, a table bar or a closing bracket.
 */
const DOCUMENTED_ROUTE = /\b(GET|HEAD|POST|PUT|PATCH|DELETE)\b[`*]*(?:\s*\|\s*|\s+)[`*]*(\/[^\s`|)\]"',;<>\\]*)/g;

interface DocumentedRoute {
  where: string;
  method: string;
  path: string;
}

function documentedRoutes(): DocumentedRoute[] {
  const out: DocumentedRoute[] = [];
  for (const { file, lines } of docs) {
    lines.forEach((line, i) => {
      for (const m of line.matchAll(DOCUMENTED_ROUTE)) {
        // A query or fragment is not part of the route; a trailing `**` closes bold text; `.`/`:` end a sentence.
        const path = m[2]!
          .replace(/[?#].*$/, "")
          .replace(/\*\*$/, "")
          .replace(/[.:]+$/, "");
        if (path === "/" || path === "") continue;
        out.push({ where: `${file}:${i + 1}`, method: m[1]!, path });
      }
    });
  }
  return out;
}

/**
 * Whether the document has the documented route: segment by segment, a `{name}` must be the document's own
 * parameter name, and a concrete value (`/s/audio/x6hbsxc7c5uoi6h6`, an example call) may stand for any
 * parameter. HEAD is served wherever GET is.
 */
function exists(route: DocumentedRoute, ops: Operation[]): boolean {
  const method = route.method === "HEAD" ? "GET" : route.method;
  if (route.path.includes("*")) {
    // A family (`GET /api/partner/sandbox/*`): some operation of that method must be in it.
    const glob = new RegExp(`^${route.path.split("*").map(escape).join(".*")}$`);
    return ops.some((op) => op.method === method && glob.test(op.path));
  }
  const want = route.path.split("/");
  return ops.some((op) => {
    if (op.method !== method) return false;
    const have = op.path.split("/");
    if (have.length !== want.length) return false;
    return have.every((seg, i) => {
      const doc = want[i]!;
      if (seg === doc) return true;
      const isParam = /^\{[^}]+\}$/.test(seg);
      return isParam && !doc.includes("{") && doc !== "";
    });
  });
}

/**
 * A path the docs name without a method, in backticks: `` `/api/partner/users/{user_id}` ``. Only paths under the
 * service's own roots count (a receiver's `/webhooks/herald` or a page's `/tracks/42` are not Herald's).
 */
const BARE_PATH = /`(\/(?:api|admin|developers|status|transparency|s|trust\.json|healthz|readyz|metrics)(?=[/.?`\\]|$)[^`\s]*)`/g;

function barePaths(): Array<{ where: string; path: string }> {
  const out: Array<{ where: string; path: string }> = [];
  for (const { file, lines } of docs) {
    lines.forEach((line, i) => {
      for (const m of line.matchAll(BARE_PATH)) {
        // `/a.json\|.csv` in a table names two files; the first is enough to catch a stale prefix.
        const path = m[1]!.split("\\|")[0]!.replace(/[?#].*$/, "");
        out.push({ where: `${file}:${i + 1}`, path });
      }
    });
  }
  return out;
}

/**
 * Whether a bare path is Herald's: a family (`/api/partner/sandbox/`, `/api/…`, `/api/public/*-freshness.json`)
 * that holds some operation, an operation of any method, or a page the app serves outside the document (the
 * docs UI at /api/docs): asked for real, it must not be a 404.
 */
async function bareExists(path: string, ops: Operation[]): Promise<boolean> {
  const family = /(?:\/|…|\.\.\.)$/.exec(path);
  if (family) {
    const prefix = path.slice(0, family.index);
    return ops.some((op) => op.path.startsWith(prefix));
  }
  for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE"]) if (exists({ where: "-", method, path }, ops)) return true;
  if (path.includes("{") || path.includes("*")) return false;
  return (await h.request(path)).status !== 404;
}

describe("docs ↔ OpenAPI", () => {
  test("every operation of /api/openapi.json is named in README.md or docs/ (OpenAPI path form, with its method unless GET)", () => {
    expect(main.length).toBeGreaterThan(100);
    expect(undocumented(main)).toEqual([]);
  });

  test("every operation of /api/openapi-transparency.yaml is in the full document and named in the docs", () => {
    expect(transparency.length).toBeGreaterThan(10);
    const full = new Set(main.map((op) => `${op.method} ${op.path}`));
    expect(transparency.map((op) => `${op.method} ${op.path}`).filter((k) => !full.has(k))).toEqual([]);
    expect(undocumented(transparency)).toEqual([]);
  });

  test("every route the docs name with a method exists in /api/openapi.json with that method", () => {
    const routes = documentedRoutes();
    expect(routes.length).toBeGreaterThan(100);
    const missing = routes.filter((r) => !NOT_HERALD_ROUTES.has(`${r.method} ${r.path}`) && !exists(r, main)).map((r) => `${r.where}: ${r.method} ${r.path}`);
    expect(missing).toEqual([]);
  });

  test("every Herald path the docs name without a method exists: in the document, as a family of it, or as a served page", async () => {
    const paths = barePaths();
    expect(paths.length).toBeGreaterThan(100);
    const missing: string[] = [];
    for (const p of paths) if (!(await bareExists(p.path, main))) missing.push(`${p.where}: ${p.path}`);
    expect(missing).toEqual([]);
  });

  test("the checks themselves: path boundaries, parameter names, concrete values, HEAD, families and pages", async () => {
    expect(await bareExists("/api/partner/sandbox/", main)).toBe(true);
    expect(await bareExists("/api/partner/sandboxes/", main)).toBe(false);
    expect(await bareExists("/api/docs", main)).toBe(true); // the docs UI: served, hidden from the document
    expect(await bareExists("/api/partner/nothing-here", main)).toBe(false);
    const ops: Operation[] = [
      { method: "GET", path: "/api/partner/users/{user_id}" },
      { method: "GET", path: "/s/audio/{code}" },
    ];
    const at = (method: string, path: string) => ({ where: "-", method, path });
    expect(exists(at("GET", "/api/partner/users/{user_id}"), ops)).toBe(true);
    expect(exists(at("GET", "/api/partner/users/{id}"), ops)).toBe(false); // not the document's name
    expect(exists(at("GET", "/api/partner/users/42"), ops)).toBe(true);
    expect(exists(at("HEAD", "/s/audio/x6hbsxc7c5uoi6h6"), ops)).toBe(true);
    expect(exists(at("POST", "/s/audio/x6hbsxc7c5uoi6h6"), ops)).toBe(false);
    expect(exists(at("GET", "/validate"), ops)).toBe(false);
    expect(pathPattern("/api/partner/users").test("`/api/partner/users/{user_id}`")).toBe(false);
    expect(pathPattern("/api/partner/users").test("`/api/partner/users?limit=10`")).toBe(true);
    expect(pathPattern("/status/feed").test("/status/feed.rss")).toBe(false);
    expect(pathPattern("/status/feed.rss").test("see /status/feed.rss.")).toBe(true);
    const found = [..."| POST | `/api/partner/users` | x |  **GET /status** and `DELETE /a/{b}`".matchAll(DOCUMENTED_ROUTE)].map((m) => `${m[1]} ${m[2]}`);
    expect(found).toEqual(["POST /api/partner/users", "GET /status**", "DELETE /a/{b}"]);
    expect(exists(at("GET", "/s/*"), ops)).toBe(true);
    expect(exists(at("POST", "/s/*"), ops)).toBe(false);
  });
});
