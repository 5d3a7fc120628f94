import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { AppError } from "../../src/http/errors/errors";
import { openTestApp } from "../support/app";
import { createAdminToken, createKey, signedJson } from "../support/partner";
import { ERROR_CATALOG } from "../../src/http/errors/errors";
import { DEFAULT_LIMIT, MAX_LIMIT, MAX_OFFSET, MAX_OFFSET_PARSED, pageOf, parseKeyPage, parsePage, type PageRequest } from "../../src/http/pagination";

/** A real table paged the way domains page: keyset by id when a cursor is given, offset otherwise. */
function table() {
  const db = new Database(":memory:");
  db.exec("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT)");
  const insert = db.prepare("INSERT INTO items (name) VALUES (?)");
  const list = (p: PageRequest) => {
    const rows =
      p.after === null
        ? (db.query("SELECT id, name FROM items ORDER BY id DESC LIMIT ? OFFSET ?").all(p.limit + 1, p.offset) as Array<{ id: number; name: string }>)
        : (db.query("SELECT id, name FROM items WHERE id < ? ORDER BY id DESC LIMIT ?").all(p.after, p.limit + 1) as Array<{ id: number; name: string }>);
    return pageOf(rows, p, (r) => r.id);
  };
  return {
    insert: (n: number) => {
      for (let i = 0; i < n; i++) insert.run(`item-${i}`);
    },
    list,
  };
}

const expectQueryError = (fn: () => unknown, field: string) => {
  try {
    fn();
    throw new Error("expected an error");
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe("invalid_query");
    expect((err as AppError).details).toEqual([expect.objectContaining({ field })]);
  }
};

describe("limit and offset", () => {
  test("defaults; the bounds are the schema's (PageQuery), checked over HTTP", async () => {
    expect(parsePage({})).toEqual({ limit: DEFAULT_LIMIT, offset: 0, after: null, cursor: null });
    expect(parsePage({ limit: MAX_LIMIT }).limit).toBe(MAX_LIMIT);
    const h = await openTestApp();
    try {
      for (const good of ["1", String(MAX_LIMIT)]) expect((await h.json(`/api/transactions/latest?limit=${good}`)).status).toBe(200);
      for (const bad of ["0", String(MAX_LIMIT + 1), "-1", "abc", "1.5", "1e308", "Infinity"]) {
        const r = await h.json(`/api/transactions/latest?limit=${bad}`);
        expect(r.status).toBe(400);
        expect(r.body.error).toBe("invalid_query");
        expect(r.body.details).toEqual([{ field: "query.limit", problem: `must be an integer from 1 to ${MAX_LIMIT}; got ${JSON.stringify(bad)}` }]);
      }
    } finally {
      await h.close();
    }
  });

  test("offset pages report next_offset and has_more", () => {
    const t = table();
    t.insert(5);
    const first = t.list(parsePage({ limit: 2 }));
    expect(first.items.map((r) => r.id)).toEqual([5, 4]);
    expect(first.pagination).toMatchObject({ has_more: true, next_offset: 2 });
    const last = t.list(parsePage({ limit: 2, offset: 4 }));
    expect(last.items.map((r) => r.id)).toEqual([1]);
    expect(last.pagination).toEqual({ has_more: false, next_offset: null, next_cursor: null });
    expect(last.query).toEqual({ limit: 2, offset: 4, cursor: null });
  });
});

describe("bounded offsets", () => {
  const expectOffsetTooLarge = (fn: () => unknown, offset: number) => {
    try {
      fn();
      throw new Error("expected an error");
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      const e = err as AppError;
      expect([e.code, e.status]).toEqual(["offset_too_large", 400]);
      expect(e.message).toContain(`query.offset is ${offset}, past ${MAX_OFFSET}`);
      expect(e.message).toContain("pagination.next_cursor");
      expect(e.details).toEqual([{ field: "query.offset", problem: expect.stringContaining("page deeper with cursor") }]);
    }
  };

  test(`a list with a cursor pages by offset up to ${MAX_OFFSET}; deeper is offset_too_large, with a key cursor too`, () => {
    expect(parsePage({ offset: MAX_OFFSET }).offset).toBe(MAX_OFFSET);
    expect(parseKeyPage({ offset: MAX_OFFSET }, ["text", "integer"]).offset).toBe(MAX_OFFSET);
    expectOffsetTooLarge(() => parsePage({ offset: MAX_OFFSET + 1 }), MAX_OFFSET + 1);
    expectOffsetTooLarge(() => parseKeyPage({ offset: MAX_OFFSET_PARSED }, ["text", "integer"]), MAX_OFFSET_PARSED);
    // A cursor is how to go deeper: from it the page starts at its position, offset 0.
    expect(parsePage({ cursor: Buffer.from('{"a":5}').toString("base64url") })).toMatchObject({ offset: 0, after: 5 });
  });

  test("the catalog entry states the limit and names the cursor", () => {
    const e = ERROR_CATALOG.offset_too_large;
    expect([e.http_status, e.category, e.retry_class]).toEqual([400, "validation", "fix_and_retry"]);
    expect(e.retry_behavior).toContain(MAX_OFFSET.toLocaleString("en-US"));
    expect(e.retry_behavior).toContain("pagination.next_cursor");
  });

  test("over HTTP: partner and operator lists refuse past the limit and answer at it; offset-only lists are not limited", async () => {
    const h = await openTestApp();
    try {
      const key = await createKey(h);
      const admin = { authorization: `Bearer ${await createAdminToken(h)}` };
      const lists = [
        (offset: number) => signedJson(h, key, "GET", `/api/partner/users?offset=${offset}`),
        (offset: number) => signedJson(h, key, "GET", `/api/partner/webhooks?offset=${offset}`),
        (offset: number) => h.json(`/admin/audio-share/track-tokens?offset=${offset}`, { headers: admin }),
        (offset: number) => h.json(`/admin/sessions?offset=${offset}`, { headers: admin }),
      ];
      for (const list of lists) {
        const at = await list(MAX_OFFSET);
        expect([at.status, at.body.query?.offset, at.body.pagination?.has_more]).toEqual([200, MAX_OFFSET, false]);
        const past = await list(MAX_OFFSET + 1);
        expect(past.status).toBe(400);
        expect(past.body).toMatchObject({ error: "offset_too_large", details: [{ field: "query.offset" }] });
        expect(past.body.message).toContain("pagination.next_cursor");
        // Past what the schema parses, the generic refusal as before.
        expect((await list(MAX_OFFSET_PARSED + 1)).body.error).toBe("invalid_query");
      }
      // Lists paged by offset only have no cursor to page with instead: a deep offset is answered (empty here).
      const triage = await h.json(`/transparency/audit-anomalies/triage.json?offset=${MAX_OFFSET + 1}`);
      expect([triage.status, triage.body.query?.offset]).toEqual([200, MAX_OFFSET + 1]);
      const jobs = await h.json(`/admin/jobs?offset=${MAX_OFFSET + 1}`, { headers: admin });
      expect([jobs.status, jobs.body.count]).toEqual([200, 0]);
    } finally {
      await h.close();
    }
  });

  test("the OpenAPI document states the limit on every cursor list's offset, and documents the code", async () => {
    const h = await openTestApp();
    try {
      type Param = { name: string; in: string; description?: string; schema?: { maximum?: number; description?: string } };
      const doc = (await h.json("/api/openapi.json")).body as {
        paths: Record<string, Record<string, { parameters?: Param[] }>>;
        components: { responses: Record<string, { description: string }>; schemas: { ErrorCode: { enum: string[] } } };
      };
      const described: string[] = [];
      for (const [path, ops] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(ops)) {
          const offset = op.parameters?.find((p) => p.name === "offset" && p.in === "query");
          const text = offset?.description ?? offset?.schema?.description ?? "";
          if (!text.includes("ignored with cursor")) continue;
          described.push(`${method.toUpperCase()} ${path}`);
          expect({ path, text }).toEqual({ path, text: expect.stringContaining(`above ${MAX_OFFSET} it is 400 offset_too_large`) });
          expect(text).toContain("pagination.next_cursor");
        }
      }
      expect(described).toEqual(expect.arrayContaining(["GET /api/salutes/ledger", "GET /api/partner/users", "GET /api/partner/user-lookup"]));
      expect(doc.components.schemas.ErrorCode.enum).toContain("offset_too_large");
      expect(doc.components.responses.BadRequest?.description).toContain("`offset_too_large`");
    } finally {
      await h.close();
    }
  });
});

describe("cursor", () => {
  test("walks every row exactly once even while rows are inserted", () => {
    const t = table();
    t.insert(7);
    const seen: number[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 10; i++) {
      const page = t.list(parsePage({ limit: 3, cursor }));
      seen.push(...page.items.map((r) => r.id));
      t.insert(2); // new rows land before the cursor and must not shift the pages
      if (!page.pagination.has_more) break;
      cursor = page.pagination.next_cursor!;
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    }
    expect(seen).toEqual([7, 6, 5, 4, 3, 2, 1]);
  });

  test("a forged or garbled cursor is 400, and cursor with offset is refused", () => {
    expectQueryError(() => parsePage({ cursor: "not-a-cursor!!" }), "query.cursor");
    expectQueryError(() => parsePage({ cursor: Buffer.from('{"x":1}').toString("base64url") }), "query.cursor");
    const good = Buffer.from('{"a":5}').toString("base64url");
    expect(parsePage({ cursor: good }).after).toBe(5);
    expectQueryError(() => parsePage({ cursor: good, offset: 3 }), "query.offset");
  });
});

describe("every list answers in one shape", () => {
  type Schema = { $ref?: string; properties?: Record<string, Schema> };
  test("each documented answer with pagination has count, a query echo with limit, offset and cursor, and the three pagination fields", async () => {
    const h = await openTestApp();
    try {
      const doc = (await h.json("/api/openapi.json")).body as {
        paths: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, { schema?: Schema }> }> }>>;
        components: { schemas: Record<string, Schema> };
      };
      const deref = (s: Schema | undefined): Schema | undefined => (s?.$ref ? deref(doc.components.schemas[s.$ref.split("/").pop()!]) : s);
      const lists: string[] = [];
      const problems: string[] = [];
      for (const [path, ops] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(ops)) {
          for (const [status, response] of Object.entries(op.responses ?? {})) {
            const body = deref(response.content?.["application/json"]?.schema);
            if (!status.startsWith("2") || !body?.properties?.pagination) continue;
            const name = `${method.toUpperCase()} ${path}`;
            lists.push(name);
            const fields = (s: Schema | undefined) => Object.keys(deref(s)?.properties ?? {});
            const missing = [
              ...["count", "query"].filter((f) => !body.properties![f]),
              ...["limit", "offset", "cursor"].filter((f) => !fields(body.properties!.query).includes(f)).map((f) => `query.${f}`),
              ...["has_more", "next_offset", "next_cursor"].filter((f) => !fields(body.properties!.pagination).includes(f)).map((f) => `pagination.${f}`),
            ];
            if (missing.length) problems.push(`${name}: ${missing.join(", ")}`);
          }
        }
      }
      // The operators' offset-paged lists are among them (they once echoed no cursor).
      expect(lists).toEqual(
        expect.arrayContaining([
          "GET /admin/backups",
          "GET /admin/ops/incidents",
          "GET /admin/ops/alerts-monitor/export.json",
          "GET /admin/console/dead-letters.json",
        ]),
      );
      expect(problems).toEqual([]);
    } finally {
      await h.close();
    }
  });

  test("an operators' list paged by offset echoes cursor null and pages by its total", async () => {
    const h = await openTestApp();
    try {
      const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
      const incidents = await h.json("/admin/ops/incidents?limit=1&offset=3", { headers: auth });
      expect(incidents.status).toBe(200);
      expect(incidents.body).toMatchObject({
        count: 0,
        total: 0,
        query: { limit: 1, offset: 3, cursor: null, status: null, severity: null, since: null },
        pagination: { has_more: false, next_offset: null, next_cursor: null },
      });
      const alerts = await h.json("/admin/ops/alerts-monitor/export.json?limit=2", { headers: auth });
      expect(alerts.status).toBe(200);
      expect(alerts.body.query).toMatchObject({ limit: 2, offset: 0, cursor: null });
      const dead = await h.json("/admin/console/dead-letters.json?limit=2", { headers: auth });
      expect(dead.status).toBe(200);
      expect(dead.body.query).toEqual({ partner: null, event_type: null, limit: 2, offset: 0, cursor: null });
    } finally {
      await h.close();
    }
  });
});
