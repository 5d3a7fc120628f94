import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { recordAlertRun } from "../../src/ops/alerts/service";
import { backupNameAt } from "../../src/ops/backups/list";
import { openTestApp, jsonInit, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { operationsOf } from "../support/fuzz-operations";
import type { FuzzOperation } from "../support/fuzz-target";
import { createAdminToken } from "../support/partner";
import { BOT_TOKEN, initDataFor, QUIZ3_MISSION, tmaPost } from "../messenger/support";

// Two conventions of operator (and transparency) answers, walked over the served OpenAPI document so a new route
// is checked without anyone listing it (docs/http-conventions.md):
// - include_meta: every JSON GET under /admin and /transparency declares it, and `1`/`true` adds
//   meta {request_id, generated_at_utc} (11 operator exports used to refuse it with 400);
// - Cache-Control: every /admin answer is `private, no-store`, or `private, no-cache` when it has validators
//   (24 exports used to have none, preflight-guards.json with its secret fingerprints among them).
// On PostgreSQL Herald makes no backups of its own: there the backup routes answer 409 backup_not_on_postgres
// (with the same Cache-Control), and every other route as on SQLite.

const T0 = "2026-03-01T12:00:00.000Z";
const NO_STORE = "private, no-store";
const REVALIDATE = "private, no-cache";

let h: TestApp;
let auth: Record<string, string>;
let operations: FuzzOperation[];
const pathValues: Record<string, string> = {};

beforeAll(async () => {
  // A bot token, so that the messenger's operator routes answer rather than 503 messenger_not_configured.
  h = await openTestApp({ clock: new FakeClock(T0), env: { MESSENGER_BOT_TOKEN: BOT_TOKEN } });
  auth = { authorization: `Bearer ${await createAdminToken(h)}` };
  const incident = await h.json(
    "/admin/status/incidents",
    jsonInit("POST", { title: "Deliveries delayed", message: "Some receivers are late.", severity: "warn", components: ["webhooks"] }, auth),
  );
  expect(incident.status).toBe(201);
  pathValues.incident_id = String(incident.body.incident.id);
  const backup = await h.json("/admin/backup/run", { method: "POST", headers: auth });
  if (h.ctx.store.dialect === "sqlite") {
    expect(backup.status).toBe(200);
    pathValues.name = backup.body.backup.name;
  } else {
    expect([backup.status, backup.body.error]).toEqual([409, "backup_not_on_postgres"]);
    pathValues.name = backupNameAt(h.clock.now());
  }
  await recordAlertRun(h.ctx, { source: "preflight", alerts: [{ name: "token.mint", status: "warn", value: "3" }] });
  // A player (through the mini-app's own sign-in) and a mission, for the messenger operator routes that name one.
  expect((await h.json("/api/messenger/init/verify", tmaPost(initDataFor(h, { id: 4242, first_name: "Ada" })))).status).toBe(200);
  pathValues.telegram_user_id = "4242";
  expect((await h.json("/api/messenger/admin/missions", jsonInit("POST", QUIZ3_MISSION, auth))).status).toBeLessThan(300);
  pathValues.mission_key = QUIZ3_MISSION.mission_key;
  pathValues.alert_id = String((await h.ctx.store.get<{ id: number }>("SELECT max(id) AS id FROM ops_alert_runs"))!.id);
  operations = operationsOf(await (await h.request("/api/openapi.json")).json());
});
afterAll(() => h.close());

/** A backup route on PostgreSQL, where its answer is 409 backup_not_on_postgres (src/ops/backups/engine.ts). */
const backupsRefused = (op: FuzzOperation) =>
  h.ctx.store.dialect === "postgres" && (op.path === "/admin/backups" || op.path.startsWith("/admin/backups/") || op.path === "/admin/backup/status");
/** A 409 backup_not_on_postgres (the code read from the body unless it came compressed). */
const isBackupRefusal = (res: Response, body: string | null) => res.status === 409 && (body === null || JSON.parse(body).error === "backup_not_on_postgres");
const under = (prefix: string) => (op: FuzzOperation) => op.method === "GET" && (op.path === prefix || op.path.startsWith(`${prefix}/`));
const contentTypes = (op: FuzzOperation) => Object.keys(op.raw.responses?.["200"]?.content ?? {});
// A .csv route's JSON twin is its download token (download_token=1), not a read of its rows.
const isJson = (op: FuzzOperation) =>
  !op.path.endsWith(".csv") && (contentTypes(op).some((t) => t.startsWith("application/json")) || (contentTypes(op).length === 0 && op.path.endsWith(".json")));

/** The operation's path with its parameters filled from this app's data. */
function pathOf(op: FuzzOperation): string {
  return op.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const v = pathValues[name];
    if (v === undefined) throw new Error(`${op.id}: no value for path parameter ${name}`);
    return encodeURIComponent(v);
  });
}

/** Query parameters a route requires, with values this app accepts. */
async function requiredQuery(op: FuzzOperation): Promise<string> {
  const required = op.parameters.filter((p) => p.required && p.in === "query").map((p) => p.name);
  if (required.length === 0) return "";
  if (op.path === "/admin/ops/link-inbox/events/export-download.csv") {
    const issued = await h.json("/admin/ops/link-inbox/events/export.json?download_token=1", { headers: auth });
    return `download_token=${issued.body.download_token}`;
  }
  throw new Error(`${op.id}: required query parameters ${required.join(", ")} have no value in this test`);
}

describe("include_meta on every JSON GET under /admin, /api/messenger/admin and /transparency", () => {
  test("declared in the OpenAPI document and honoured with 1, true and the bare flag; 0 leaves it out", async () => {
    const routes = operations.filter((op) => (under("/admin")(op) || under("/api/messenger/admin")(op) || under("/transparency")(op)) && isJson(op));
    expect(routes.length).toBeGreaterThan(40);
    const problems: string[] = [];
    for (const op of routes) {
      if (!op.parameters.some((p) => p.name === "include_meta" && p.in === "query")) problems.push(`${op.id}: include_meta not declared`);
      const headers = op.credential === "admin" ? auth : {};
      // The games overview export is CSV by default; its documented JSON twin is format=json.
      const extra = [await requiredQuery(op), op.path === "/api/messenger/admin/games/overview/export" ? "format=json" : ""].filter(Boolean).join("&");
      for (const flag of ["1", "true", null]) {
        const asked = flag === null ? "include_meta" : `include_meta=${flag}`;
        const res = await h.request(`${pathOf(op)}?${extra ? `${extra}&` : ""}${asked}`, { headers });
        const text = await res.text();
        if (backupsRefused(op)) {
          if (!isBackupRefusal(res, text)) problems.push(`${op.id} ${asked}: ${res.status} ${text.slice(0, 160)}`);
          continue;
        }
        if (res.status !== 200) {
          problems.push(`${op.id} ${asked}: ${res.status} ${text.slice(0, 160)}`);
          continue;
        }
        const meta = JSON.parse(text).meta;
        if (meta?.request_id !== res.headers.get("x-request-id") || meta?.generated_at_utc !== T0)
          problems.push(`${op.id} ${asked}: meta ${JSON.stringify(meta)}`);
      }
      const without = await h.request(`${pathOf(op)}${extra ? `?${extra}` : ""}`, { headers });
      if (without.status === 200 && "meta" in JSON.parse(await without.text())) problems.push(`${op.id}: meta without include_meta`);
      const off = await h.request(`${pathOf(op)}?${extra ? `${extra}&` : ""}include_meta=0`, { headers });
      if (off.status === 200 && "meta" in JSON.parse(await off.text())) problems.push(`${op.id}: meta with include_meta=0`);
    }
    expect(problems).toEqual([]);
  });

  test("a validator-backed answer with include_meta is its own: another ETag than the plain one", async () => {
    for (const path of ["/admin/ops/preflight-guards/delta.summary.json", "/admin/ops/digest/resolved-verification.json"]) {
      const plain = await h.request(path, { headers: auth });
      const withMeta = await h.request(`${path}?include_meta=1`, { headers: auth });
      expect([plain.status, withMeta.status]).toEqual([200, 200]);
      expect(withMeta.headers.get("etag")).not.toBe(plain.headers.get("etag"));
      expect(((await withMeta.json()) as { meta: { request_id: string } }).meta.request_id).toBe(withMeta.headers.get("x-request-id")!);
      // Without include_meta the ETag still holds across requests.
      const again = await h.request(path, { headers: { ...auth, "if-none-match": plain.headers.get("etag")! } });
      expect(again.status).toBe(304);
    }
  });
});

describe("Cache-Control of every operator answer (/admin, /api/messenger/admin, /metrics)", () => {
  const expected = (res: Response) => (res.headers.has("etag") || res.headers.has("last-modified") ? REVALIDATE : NO_STORE);

  test("every GET: private, no-store, or private, no-cache with validators — pages, exports and JSON alike", async () => {
    // The messenger operators' routes and /metrics are operator answers too.
    const routes = operations.filter((op) => under("/admin")(op) || under("/api/messenger/admin")(op) || under("/metrics")(op));
    expect(routes.filter(under("/api/messenger/admin")).length).toBeGreaterThan(10);
    expect(routes.length).toBeGreaterThan(60);
    const problems: string[] = [];
    for (const op of routes) {
      const headers = op.credential === "admin" ? auth : {};
      for (const accept of [{}, { "accept-encoding": "gzip, br" }] as Array<Record<string, string>>) {
        const extra = await requiredQuery(op); // a download token is single-use: one per request
        const res = await h.request(`${pathOf(op)}${extra ? `?${extra}` : ""}`, { headers: { ...headers, ...accept } });
        const bytes = await res.arrayBuffer();
        const body = res.headers.has("content-encoding") ? null : new TextDecoder().decode(bytes);
        if (backupsRefused(op) ? !isBackupRefusal(res, body) : res.status >= 400) problems.push(`${op.id}: ${res.status}`);
        const cc = res.headers.get("cache-control");
        if (cc !== expected(res)) problems.push(`${op.id}${"accept-encoding" in accept ? " (compressed)" : ""}: ${cc}`);
      }
    }
    expect(problems).toEqual([]);
  });

  test("refusals and redirects too: no credentials, a wrong token, an unknown /admin path", async () => {
    const problems: string[] = [];
    for (const op of operations.filter((op) => under("/admin")(op) || under("/api/messenger/admin")(op))) {
      if (op.credential !== "admin") continue;
      for (const headers of [{}, { authorization: "Bearer hat_not-a-real-token-at-all" }] as Array<Record<string, string>>) {
        const res = await h.request(pathOf(op), { headers });
        await res.arrayBuffer();
        if (res.status < 300) problems.push(`${op.id}: ${res.status} without a valid credential`);
        if (res.headers.get("cache-control") !== NO_STORE) problems.push(`${op.id} ${res.status}: ${res.headers.get("cache-control")}`);
      }
    }
    expect(problems).toEqual([]);
    const unknown = await h.request("/admin/no-such-page", { headers: auth });
    expect([unknown.status, unknown.headers.get("cache-control")]).toEqual([404, NO_STORE]);
    // A body refused by its Content-Length alone, before any route runs.
    const huge = await h.request("/admin/status/incidents", {
      method: "POST",
      headers: { ...auth, "content-type": "application/json", "content-length": String(h.ctx.config.maxBodyBytes + 1) },
      body: "{}",
    });
    expect([huge.status, huge.headers.get("cache-control")]).toEqual([413, NO_STORE]);
  });

  test("preflight-guards.json opened with the session cookie is not stored either", async () => {
    const form = await h.request("/admin/sign-in");
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(await form.text())![1]!;
    const signIn = await h.request("/admin/sign-in", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: `herald_signin_csrf=${csrf}` },
      body: new URLSearchParams({ token: auth.authorization!.slice(7), csrf_token: csrf }).toString(),
    });
    expect([signIn.status, signIn.headers.get("cache-control")]).toEqual([303, NO_STORE]);
    const session = signIn.headers
      .getSetCookie()
      .find((c) => c.startsWith("herald_admin_session="))!
      .split(";")[0]!;
    const res = await h.request("/admin/ops/preflight-guards.json", { headers: { cookie: session } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { guards: Array<{ secret: boolean }> }).guards.some((g) => g.secret)).toBe(true);
    expect(res.headers.get("cache-control")).toBe(NO_STORE);
  });

  test("public answers keep their own caching", async () => {
    const res = await h.request("/transparency/audit-anomalies/glossary.json");
    expect(res.headers.get("cache-control")).toBe("public, max-age=60");
  });
});
