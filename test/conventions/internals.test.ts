// Where Herald relies on what its dependencies do not document (docs/architecture.md, "Where Herald relies on its
// dependencies' internals"): each test here holds one such behaviour of the pinned version, so an upgrade of
// Elysia, Bun or drizzle that changes it fails here, by name, before it fails somewhere far from the cause. The
// rest of that list is held by the tests the section names. Run this file first when upgrading.
import { Database, SQLiteError } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { type ReservedSQL, SQL } from "bun";
import { Elysia, t } from "elysia";
import { FormatRegistry } from "@sinclair/typebox";
import { TransformDecodeError } from "@sinclair/typebox/value";
import { getTableConfig } from "drizzle-orm/sqlite-core";
import { heraldTables, postgresDdl } from "../../drizzle/postgres/generate";
import { openDatabase } from "../../src/db/client";
import { migrate, migrationStatus } from "../../src/db/migrate";
import { installNativeRoutes } from "../../src/http/native-routes";
import { numericSpecOf } from "../../src/http/params";
import { strictJsonNumbers } from "../../src/http/json-numbers";
import { openTestApp, type TestApp } from "../support/app";
import { freshPostgresDatabase } from "../support/engine";
import { startTarget, TARGET } from "../support/target";
import { describeOn } from "../support/skipped";

let h: TestApp | undefined;
afterEach(async () => {
  h?.app.server?.stop(true);
  await h?.close();
  h = undefined;
});

/** A row of Elysia's route table (`app.router.history`, which `app.routes` returns), as Herald reads it. */
interface HistoryRow {
  method: string;
  path: string;
  composed: unknown;
  hooks: Record<string, unknown> & {
    body?: { type?: string; properties?: Record<string, unknown> };
    detail?: { security?: Array<Record<string, unknown>> };
  };
}
type HookEntry = { fn: { name: string }; isAsync?: boolean };
const historyOf = (app: TestApp["app"]) => (app as unknown as { router: { history: HistoryRow[] } }).router.history;
const rowOf = (app: TestApp["app"], method: string, path: string) => historyOf(app).find((r) => r.method === method && r.path === path)!;
const hookNames = (row: HistoryRow, event: string) => ((row.hooks[event] ?? []) as HookEntry[]).map((x) => x.fn.name);

describe("Elysia: the route table (src/app.ts, route-index.ts, hook-scope.ts, openapi/routes.ts)", () => {
  test("app.routes is app.router.history: every route once, with method, path, its hooks and a callable handler", async () => {
    h = await openTestApp();
    const history = historyOf(h.app);
    expect(h.app.routes as unknown).toBe(history);
    expect(history.length).toBeGreaterThan(200);
    const keys = history.map((r) => `${r.method} ${r.path}`);
    expect(new Set(keys).size).toBe(keys.length);
    for (const row of history) {
      expect([typeof row.method, typeof row.path, typeof row.hooks, typeof row.composed]).toEqual(["string", "string", "object", "function"]);
    }
    // The route's own schemas and its detail (with what a macro added: the partner guard's security) are on its hooks.
    const credit = rowOf(h.app, "POST", "/api/salutes/credit");
    expect(credit.hooks.body?.type).toBe("object");
    expect(Object.keys(credit.hooks.body?.properties ?? {})).toContain("amount");
    expect(credit.hooks.detail?.security?.some((s) => "PartnerSignature" in s)).toBe(true);
    // A global hook is a { fn } entry in the lists of every route registered after it, and the macro's transform is
    // the route's own; the `isAsync` mark applyHookScopes set is where Elysia keeps its guess.
    expect(hookNames(credit, "parse")).toContain("bodyParsed");
    expect(hookNames(credit, "transform")).toEqual(["partnerVerified"]);
    const caps = rowOf(h.app, "GET", "/api/partner/capabilities");
    expect((caps.hooks.transform as HookEntry[]).map((x) => [x.fn.name, x.isAsync])).toEqual([["partnerVerifiedNow", false]]);
  });

  test("a route is compiled from its history row's hook lists when first called, so edits made after composing take effect", async () => {
    h = await openTestApp();
    // What applyHookScopes does, done here to a route that would carry the hook: take compression off before it runs.
    const errors = rowOf(h.app, "GET", "/api/partner/errors.json");
    expect(hookNames(errors, "mapResponse")).toEqual(["requestAnswered", "compressionMapped"]);
    errors.hooks.mapResponse = (errors.hooks.mapResponse as HookEntry[]).filter((x) => x.fn.name !== "compressionMapped");
    const gzip = { headers: { "accept-encoding": "gzip" } };
    const edited = await h.request("/api/partner/errors.json", gzip);
    expect(edited.status).toBe(200);
    expect(edited.headers.get("content-encoding")).toBeNull();
    expect((await edited.text()).length).toBeGreaterThan(1024);
    // The same hook, left in place on another route, still compresses: the edit, not the hook, made the difference.
    const kept = await h.request("/status", gzip);
    expect([kept.status, kept.headers.get("content-encoding")]).toEqual([200, "gzip"]);
  });

  test("mapResponse hooks run in order until one returns a value; after the error hook, every one; none for an unmatched path's Response", async () => {
    // src/http/core.ts logs a request in the first mapResponse hook (it returns nothing) and in the error hook.
    const seen: string[] = [];
    const app = new Elysia()
      .onError({ as: "global" }, function refused({ code }) {
        seen.push(`error ${code}`);
        return new Response("refused", { status: code === "NOT_FOUND" ? 404 : 400 });
      })
      .mapResponse({ as: "global" }, function first({ path }) {
        seen.push(`first ${path}`);
      })
      .mapResponse({ as: "global" }, function second({ path }) {
        seen.push(`second ${path}`);
        return new Response("mapped", { status: 200 });
      })
      .mapResponse({ as: "global" }, function third({ path }) {
        seen.push(`third ${path}`);
      })
      .get("/ok", () => ({ ok: true }))
      .get("/throws", () => {
        throw new Error("no");
      });
    expect(await (await app.handle(new Request("http://localhost/ok"))).text()).toBe("mapped");
    expect(seen.splice(0)).toEqual(["first /ok", "second /ok"]);
    await app.handle(new Request("http://localhost/throws"));
    expect(seen.splice(0)).toEqual(["error UNKNOWN", "first /throws", "second /throws", "third /throws"]);
    expect((await app.handle(new Request("http://localhost/nowhere"))).status).toBe(404);
    expect(seen.splice(0)).toEqual(["error NOT_FOUND"]);
  });

  test("Elysia's lazy handler entry is replaced by the compiled handler on first call (RouteIndex.handlerOf reads it then)", async () => {
    h = await openTestApp();
    const row = rowOf(h.app, "GET", "/readyz");
    const lazy = row.composed;
    expect((await h.request("/readyz")).status).toBe(200);
    expect(row.composed).not.toBe(lazy);
    expect(typeof row.composed).toBe("function");
    const compiled = row.composed;
    expect((await h.request("/readyz")).status).toBe(200);
    expect(row.composed).toBe(compiled);
  });

  test("the request hook is guessed synchronous from its source, and the app's fetch handler compiles without await", async () => {
    h = await openTestApp();
    expect((await h.request("/healthz")).status).toBe(200);
    const app = h.app as unknown as { event: { request: HookEntry[] }; fetch: { constructor: { name: string } } };
    expect(app.event.request.map((x) => [x.fn.name, x.isAsync])).toEqual([["requestStarted", false]]);
    expect(app.fetch.constructor.name).toBe("Function");
  });
});

describe("Elysia: the errors error-answers.ts reads (src/http/errors/error-answers.ts)", () => {
  test("codes VALIDATION, PARSE and NOT_FOUND; a ValidationError's type and all; a parser's error as cause; a decode error's inner error", async () => {
    const seen: Array<{ code: unknown; error: Record<string, unknown> }> = [];
    const app = new Elysia({ normalize: false, encodeSchema: false })
      .onError(({ code, error }) => {
        seen.push({ code, error: error as unknown as Record<string, unknown> });
        return new Response("refused", { status: 400 });
      })
      .get("/q", () => "ok", { query: t.Object({ n: t.Integer({ minimum: 1, maximum: 5 }) }) })
      .get("/list", () => "ok", { query: t.Object({ x: t.Optional(t.Array(t.String({ maxLength: 2 }), { maxItems: 2 })) }) })
      .post("/b", () => "ok", { body: t.Object({ a: t.String() }) })
      .get("/r", () => ({ a: 1 }) as never, { response: t.Object({ a: t.String() }) })
      .post("/p", () => "ok", {
        parse: () => {
          throw new Error("the parser's own error");
        },
        body: t.Object({ a: t.String() }),
      });
    const caught = async (path: string, init?: RequestInit) => {
      seen.length = 0;
      await app.handle(new Request(`http://localhost${path}`, init));
      expect(seen.length).toBe(1);
      return seen[0]!;
    };
    const all = (e: Record<string, unknown>) => (e.all as Array<{ path: string; message: string }>).map((x) => [x.path, x.message]);
    const json = (body: string): RequestInit => ({ method: "POST", body, headers: { "content-type": "application/json" } });

    const notNumber = await caught("/q?n=abc");
    expect([notNumber.code, notNumber.error.type]).toEqual(["VALIDATION", "query"]);
    expect(all(notNumber.error)[0]![0]).toBe("/n");
    // A coerced value out of its bounds is reported as "property", without the parameter's name.
    const outOfRange = await caught("/q?n=9");
    expect([outOfRange.code, outOfRange.error.type]).toEqual(["VALIDATION", "property"]);
    expect(Array.isArray(outOfRange.error.all)).toBe(true);
    const body = await caught("/b", json('{"a":1}'));
    expect([body.code, body.error.type, all(body.error)]).toEqual(["VALIDATION", "body", [["/a", "Expected string"]]]);
    const response = await caught("/r");
    expect([response.code, response.error.type]).toEqual(["VALIDATION", "response"]);
    const parse = await caught("/p", json("{}"));
    expect([parse.code, (parse.error.cause as Error)?.message]).toEqual(["PARSE", "the parser's own error"]);
    expect((await caught("/nowhere")).code).toBe("NOT_FOUND");
    // An array item past its schema fails while decoding: either a ValidationError with its list, or TypeBox's
    // decode error with no `all` and one inner error that has a path — error-answers.ts reads both.
    const decoded = await caught("/list?x=abc");
    expect(decoded.code).toBe("VALIDATION");
    const inner = decoded.error.error as { path?: unknown } | undefined;
    expect(Array.isArray(decoded.error.all) || typeof inner?.path === "string").toBe(true);
  });

  test("Elysia's compiled handlers tell a failed decode by the class name TransformDecodeError (src/http/build-check.ts)", () => {
    expect(TransformDecodeError.name).toBe("TransformDecodeError");
    const dist = dirname(Bun.resolveSync("elysia", import.meta.dir));
    const compose = readFileSync(join(dist, "compose.mjs"), "utf8");
    expect(compose).toContain("error.constructor.name === 'TransformDecodeError'");
  });
});

describe("Elysia's t.Integer and TypeBox's format registry (src/http/params.ts, json-numbers.ts)", () => {
  test("t.Integer is a coercing union of numeric text (format integer) and the integer; the text is judged by the registry's format", async () => {
    const schema = t.Integer({ minimum: 1, maximum: 9 }) as unknown as { anyOf?: Array<{ type?: string; format?: string }> };
    expect(schema.anyOf?.map((b) => [b.type, b.format])).toEqual([
      ["string", "integer"],
      ["integer", undefined],
    ]);
    expect(numericSpecOf(schema as never)).toEqual({ integer: true, minimum: 1, maximum: 9, values: undefined });
    expect(strictJsonNumbers(schema as never)).toMatchObject({ type: "integer", minimum: 1, maximum: 9 });
    // Herald's registry entry (set when src/http/params.ts loads) decides which text Elysia turns into a number.
    expect(FormatRegistry.Get("integer")?.("0x10")).toBe(false);
    h = await openTestApp();
    const hex = await h.json("/api/public/system-status/trend?limit=0x10");
    expect([hex.status, hex.body.error]).toEqual([400, "invalid_query"]);
    expect((await h.json("/api/public/system-status/trend?limit=16")).status).toBe(200);
  });
});

describe("Elysia + Bun.serve: native routes and the server's route table (src/http/native-routes.ts, src/cli/serve.ts)", () => {
  test("config.serve.routes wins for its methods, other methods reach Elysia; the finished table is the last server.reload after listen", async () => {
    h = await openTestApp();
    const native = () => new Response("native healthz");
    installNativeRoutes(h.app, { "/healthz": { GET: native }, "/__internals/native": { GET: () => new Response("native only") } });
    h.app.listen({ port: 0, hostname: "127.0.0.1", reusePort: false });
    const server = h.app.server!;
    // What serve.ts's keepServeOptions does: remember the options Elysia reloads the server with.
    const reloaded: Array<{ routes?: Record<string, Record<string, unknown>>; fetch?: unknown }> = [];
    const reload = server.reload.bind(server);
    server.reload = ((options: Parameters<typeof server.reload>[0]) => {
      reloaded.push(options as (typeof reloaded)[number]);
      return reload(options);
    }) as typeof server.reload;
    // Elysia's compile() reloads first without routes; the last reload carries the finished table, which the drain
    // serves again with Connection: close (serve.ts, closeEachConnection).
    for (let i = 0; i < 100 && !reloaded.at(-1)?.routes; i++) await Bun.sleep(10);
    const last = reloaded.at(-1)!;
    expect(last.routes?.["/healthz"]?.GET).toBe(native);
    expect(Object.keys(last.routes ?? {})).toContain("/api/partner/capabilities");
    expect(typeof last.fetch).toBe("function");
    const base = `http://127.0.0.1:${server.port}`;
    expect(await (await fetch(`${base}/healthz`)).text()).toBe("native healthz");
    expect(await (await fetch(`${base}/__internals/native`)).text()).toBe("native only");
    const post = await fetch(`${base}/healthz`, { method: "POST" });
    expect([post.status, post.headers.get("allow"), ((await post.json()) as { error: string }).error]).toEqual([405, "GET, HEAD", "method_not_allowed"]);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
  });
});

describe("Bun's build (package.json build): what the binary embeds", () => {
  // In process by default; with HERALD_TEST_TARGET=dist/herald, against the built binary (test/support/target.ts).
  test(`files imported with { type: "file" } and { type: "text" }, and the SDK macro's tarball, are served (${TARGET.label})`, async () => {
    const target = await startTarget();
    try {
      const assets: Array<[string, string, number]> = [
        ["/api/docs/assets/scalar-api-reference.js", "text/javascript", 100_000],
        ["/api/docs/assets/swagger-ui-bundle.js", "text/javascript", 100_000],
        ["/api/docs/assets/swagger-ui.css", "text/css", 1_000],
      ];
      for (const [path, type, min] of assets) {
        const res = await target.request(path);
        expect([path, res.status, res.headers.get("content-type")?.split(";")[0]]).toEqual([path, 200, type]);
        expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(min);
      }
      const manifest = await target.json<{ download_path: string; sha256: string }>("/developers/sdk-manifest.json");
      expect(manifest.status).toBe(200);
      const tarball = new Uint8Array(await (await target.request(manifest.body.download_path)).arrayBuffer());
      expect(new Bun.CryptoHasher("sha256").update(tarball).digest("hex")).toBe(manifest.body.sha256);
      expect((await target.request("/developers/deprecations.json")).status).toBe(200);
    } finally {
      await target.stop();
    }
  });
});

describe("drizzle-orm (src/db/migrate.ts, src/db/postgres-ddl.ts)", () => {
  test("the SQLite session's dialect.migrate applies the embedded migrations once, recorded in __drizzle_migrations", () => {
    const dir = mkdtempSync(join(tmpdir(), "herald-internals-"));
    const handle = openDatabase(join(dir, "m.db"));
    try {
      const first = migrate(handle);
      expect(first.total).toBeGreaterThan(0);
      expect(first.applied).toBe(first.total);
      expect(migrate(handle)).toEqual({ applied: 0, total: first.total });
      expect(migrationStatus(handle)).toEqual({ applied: first.total, total: first.total, current: true });
      const rows = handle.sqlite.query("SELECT hash, created_at FROM __drizzle_migrations").all() as Array<{ hash: string; created_at: number }>;
      expect(rows.length).toBe(first.total);
      for (const r of rows) expect([typeof r.hash, r.hash.length > 0, typeof r.created_at]).toEqual(["string", true, "number"]);
    } finally {
      handle.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("every table's index config (name, columns, where, unique) and SQL chunks read as postgres-ddl.ts reads them", async () => {
    const ddl = await postgresDdl();
    expect(ddl).not.toContain("undefined");
    expect(ddl).not.toContain("[object Object]");
    let partial = 0;
    for (const table of await heraldTables()) {
      const c = getTableConfig(table);
      for (const idx of c.indexes) {
        const { name, columns, unique, where } = idx.config as { name: string; columns: unknown[]; unique: boolean; where?: unknown };
        expect([typeof name, columns.length > 0, typeof unique]).toEqual(["string", true, "boolean"]);
        expect(ddl).toContain(`INDEX "${name}" ON "${c.name}"`);
        if (where) partial++;
      }
    }
    expect(partial).toBeGreaterThan(0);
    expect(ddl).toContain('CREATE UNIQUE INDEX "wallet_links_one_primary_idx" ON "wallet_links" ("user_id") WHERE is_primary = 1');
  });
});

describe("bun:sqlite (src/db/sqlite-engine.ts)", () => {
  test("SQLiteError codes and messages the engine maps: UNIQUE and PRIMARY KEY violations, a busy database", () => {
    const dir = mkdtempSync(join(tmpdir(), "herald-internals-"));
    const path = join(dir, "e.db");
    const a = new Database(path, { create: true, strict: true });
    const b = new Database(path, { strict: true });
    const errorOf = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        return err as SQLiteError;
      }
      throw new Error("no error");
    };
    try {
      a.exec("PRAGMA journal_mode = WAL");
      a.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, owner TEXT NOT NULL UNIQUE)");
      a.query("INSERT INTO t (id, owner) VALUES (?, ?)").run(1, "ana");
      const unique = errorOf(() => a.query("INSERT INTO t (id, owner) VALUES (?, ?)").run(2, "ana"));
      expect(unique).toBeInstanceOf(SQLiteError);
      expect([unique.code, unique.message]).toEqual(["SQLITE_CONSTRAINT_UNIQUE", "UNIQUE constraint failed: t.owner"]);
      const primary = errorOf(() => a.query("INSERT INTO t (id, owner) VALUES (?, ?)").run(1, "bo"));
      expect(primary.code).toBe("SQLITE_CONSTRAINT_PRIMARYKEY");
      // A write while another connection holds the write lock, with no busy timeout: SQLITE_BUSY (→ SerializationFailure).
      b.exec("PRAGMA busy_timeout = 0");
      a.exec("BEGIN IMMEDIATE");
      const busy = errorOf(() => b.exec("BEGIN IMMEDIATE"));
      expect(String(busy.code)).toStartWith("SQLITE_BUSY");
      a.exec("ROLLBACK");
    } finally {
      b.close();
      a.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// Bun's PostgreSQL client as src/db/postgres-engine.ts, postgres-batches.ts, postgres-wire.ts and in-order.ts use it.
// With HERALD_TEST_ENGINE=postgres (a fresh database on the throwaway cluster, test/support/engine.ts).
describeOn("postgres", "test/conventions/internals.test.ts")("Bun's SQL client on PostgreSQL (src/db/postgres-*.ts)", () => {
  const withSql = async (fn: (sql: SQL) => Promise<void>) => {
    const db = await freshPostgresDatabase();
    const sql = new SQL({ url: db.url, max: 2, bigint: true, connectionTimeout: 5 } as ConstructorParameters<typeof SQL>[0]);
    try {
      await fn(sql);
    } finally {
      await sql.close();
      await db.drop();
    }
  };
  const failure = async (p: Promise<unknown>) => {
    try {
      await p;
    } catch (err) {
      return err as { errno?: unknown; code?: unknown; constraint?: unknown; name?: unknown; message: string };
    }
    throw new Error("no error");
  };

  test("errors carry the SQLSTATE in errno and the constraint's name; results carry count and column type OIDs", async () => {
    await withSql(async (sql) => {
      await sql.unsafe("CREATE TABLE t (id bigint PRIMARY KEY, owner text NOT NULL, CONSTRAINT t_owner_key UNIQUE (owner))");
      const inserted = (await sql.unsafe("INSERT INTO t (id, owner) VALUES ($1, $2), ($3, $4)", [1, "ana", 2, "bo"])) as { count?: number };
      expect(inserted.count).toBe(2);
      const dup = await failure(sql.unsafe("INSERT INTO t (id, owner) VALUES ($1, $2)", [3, "ana"]));
      expect([dup.errno, dup.constraint]).toEqual(["23505", "t_owner_key"]);
      const nul = await failure(sql.unsafe("SELECT $1::text AS v", ["a\u0000b"]));
      expect(nul.errno).toBe("22021");
      // int8 as BigInt (bigint: true); numeric (SUM of bigint) as text, told by its column's type OID 1700.
      const rows = (await sql.unsafe("SELECT id, SUM(id) OVER () AS total FROM t ORDER BY id")) as unknown as Array<Record<string, unknown>> & {
        columns?: Array<{ name: string; type: number }>;
      };
      expect(rows.map((r) => [typeof r.id, typeof r.total])).toEqual([
        ["bigint", "string"],
        ["bigint", "string"],
      ]);
      expect(rows.columns?.map((c) => [c.name, c.type])).toEqual([
        ["id", 20],
        ["total", 1700],
      ]);
    });
  });

  test("on a reserved connection, statements issued together are answered in order; after a failure the rest fail and COMMIT answers ROLLBACK", async () => {
    await withSql(async (sql) => {
      await sql.unsafe("CREATE TABLE t (id bigint PRIMARY KEY)");
      const conn = await sql.reserve({ signal: AbortSignal.timeout(5_000) } as never);
      try {
        // Issued without waiting for the answers before them (src/db/postgres-batches.ts, src/db/in-order.ts).
        const issued = [
          conn.unsafe("BEGIN"),
          conn.unsafe("INSERT INTO t (id) VALUES ($1)", [1]),
          conn.unsafe("SELECT count(*)::int AS n FROM t"),
          conn.unsafe("INSERT INTO t (id) VALUES ($1)", [1]),
          conn.unsafe("SELECT 1 AS after"),
          conn.unsafe("COMMIT"),
        ];
        const settled = await Promise.allSettled(issued);
        expect(settled.map((s) => s.status)).toEqual(["fulfilled", "fulfilled", "fulfilled", "rejected", "rejected", "fulfilled"]);
        expect((settled[2] as PromiseFulfilledResult<Array<{ n: number }>>).value[0]!.n).toBe(1);
        const errnoOf = (i: number) => ((settled[i] as PromiseRejectedResult).reason as { errno?: unknown }).errno;
        expect([errnoOf(3), errnoOf(4)]).toEqual(["23505", "25P02"]);
        expect((settled[5] as PromiseFulfilledResult<{ command?: string }>).value.command).toBe("ROLLBACK");
        expect(await conn.unsafe("SELECT count(*)::int AS n FROM t")).toEqual([{ n: 0 }]);
      } finally {
        conn.release();
      }
    });
  });

  /**
   * A reserved connection through holdingProxy, with two statements prepared on it; `sentTogether` issues statements
   * at once (then()ed at once, as postgres-batches.ts's send() does) while the server's answers are held back, and
   * says which markers the client sent before any answer came.
   */
  const throughProxy = async (
    fn: (sentTogether: (statements: Array<[string, unknown[]]>, markers: string[]) => Promise<boolean[]>, conn: ReservedSQL) => Promise<void>,
  ) => {
    const db = await freshPostgresDatabase();
    const proxy = holdingProxy(new URL(db.url));
    const url = new URL(db.url);
    url.port = String(proxy.port);
    const sql = new SQL({ url: url.toString(), max: 1, connectionTimeout: 5 } as ConstructorParameters<typeof SQL>[0]);
    try {
      const conn = await sql.reserve();
      try {
        expect(await conn.unsafe("SELECT $1::int AS v", [1])).toEqual([{ v: 1 }]);
        expect(await conn.unsafe("SELECT $1::text AS m", ["warm"])).toEqual([{ m: "warm" }]);
        await fn(async (statements, markers) => {
          proxy.sent = "";
          proxy.hold = true;
          const issued = statements.map(([text, params]) => conn.unsafe(text, params as never[]).then((rows) => rows));
          for (let i = 0; i < 60 && !proxy.sent.includes(markers.at(-1)!); i++) await Bun.sleep(5);
          const sent = markers.map((k) => proxy.sent.includes(k));
          proxy.release();
          await Promise.all(issued);
          return sent;
        }, conn);
      } finally {
        conn.release();
      }
    } finally {
      await sql.close();
      proxy.stop();
      await db.drop();
    }
  };

  test("statements with parameters, prepared on the connection, issued together are all sent before the first is answered (pipelined)", async () => {
    await throughProxy(async (sentTogether, conn) => {
      const statement = "SELECT $1::text AS m";
      expect(
        await sentTogether(
          [
            [statement, ["one_marker"]],
            [statement, ["two_marker"]],
            [statement, ["three_marker"]],
          ],
          ["one_marker", "two_marker", "three_marker"],
        ),
      ).toEqual([true, true, true]);
      // Each statement text is prepared on the connection once (docs/postgres.md: PgBouncer in transaction mode).
      const prepared = (await conn.unsafe("SELECT statement FROM pg_prepared_statements")) as Array<{ statement: string }>;
      expect(prepared.filter((p) => p.statement === statement).length).toBe(1);
    });
  });

  test("(Bun 1.4.5) a statement without parameters — BEGIN, COMMIT, SAVEPOINT — or one new to the connection is not pipelined: it waits for the answers before it and holds back what follows", async () => {
    // So postgres-batches.ts sends a statement without parameters (BEGIN, SAVEPOINT, RELEASE, COMMIT) as a template
    // object, which Bun prepares and pipelines (test/db/pipelining.test.ts counts a transaction's waits on the wire).
    // When this test fails, Bun changed it: measure again (bench, docs/postgres.md).
    await throughProxy(async (sentTogether) => {
      const prepared = "SELECT $1::text AS m";
      expect(
        await sentTogether(
          [
            ["BEGIN", []],
            [prepared, ["y1_marker"]],
            [prepared, ["y2_marker"]],
          ],
          ["BEGIN", "y1_marker", "y2_marker"],
        ),
      ).toEqual([true, false, false]);
      expect(
        await sentTogether(
          [
            [prepared, ["z1_marker"]],
            ["COMMIT", []],
            [prepared, ["z2_marker"]],
          ],
          ["z1_marker", "COMMIT", "z2_marker"],
        ),
      ).toEqual([true, false, false]);
      expect(
        await sentTogether(
          [
            ["SELECT $1::int AS first_use_marker", [1]],
            [prepared, ["w1_marker"]],
          ],
          ["first_use_marker", "w1_marker"],
        ),
      ).toEqual([true, false]);
    });
  });

  test("reserve() given a signal that expires rejects with TimeoutError; cancel() stops a running statement (57014)", async () => {
    await withSql(async (sql) => {
      const held = [await sql.reserve(), await sql.reserve()];
      try {
        const waited = await failure(sql.reserve({ signal: AbortSignal.timeout(50) } as never));
        expect(waited.name).toBe("TimeoutError");
      } finally {
        for (const c of held) c.release();
      }
      const q = sql.unsafe("SELECT pg_sleep(10)") as unknown as Promise<unknown> & { cancel(): unknown };
      setTimeout(() => q.cancel(), 200);
      const started = performance.now();
      const cancelled = await failure(q);
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(cancelled.errno === "57014" || cancelled.code === "ERR_POSTGRES_QUERY_CANCELLED").toBe(true);
    });
  });
});

/**
 * A TCP proxy to PostgreSQL that passes what the client sends at once (kept in `sent`, as latin1 text) and, while
 * `hold` is set, keeps the server's answers back until `release`.
 */
function holdingProxy(target: URL) {
  type Pair = { upstream: Promise<import("bun").Socket<undefined>>; queued: Uint8Array[] };
  const clients = new Set<import("bun").Socket<Pair>>();
  const held: Array<{ to: import("bun").Socket<Pair>; data: Uint8Array }> = [];
  const state = {
    hold: false,
    sent: "",
    port: 0,
    release() {
      state.hold = false;
      for (const h of held.splice(0)) h.to.write(h.data);
    },
    stop() {
      for (const c of clients) c.end();
      listener.stop(true);
    },
  };
  const listener = Bun.listen<Pair>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(client) {
        clients.add(client);
        client.data = {
          queued: [],
          upstream: Bun.connect({
            hostname: target.hostname,
            port: Number(target.port),
            socket: {
              data(_up, data) {
                const copy = new Uint8Array(data);
                if (state.hold) held.push({ to: client, data: copy });
                else client.write(copy);
              },
              close() {
                client.end();
              },
            },
          }),
        };
      },
      data(client, data) {
        state.sent += Buffer.from(data).toString("latin1");
        const copy = new Uint8Array(data);
        void client.data.upstream.then((up) => up.write(copy));
      },
      close(client) {
        clients.delete(client);
        void client.data?.upstream.then((up) => up.end());
      },
    },
  });
  state.port = listener.port;
  return state;
}
