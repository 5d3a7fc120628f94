import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exitWithin, freePort, spawnHerald, waitForHttp } from "../support/process";
import { servedDatabase } from "../support/served-database";

// `herald admin-token list` and `revoke --id N` as real processes, and a revocation made by the CLI while
// `herald serve` runs on the same database: the token's bearer calls are refused and its browser session is
// sent back to the sign-in page from the very next request (nothing is cached across processes). On the test
// run's engine: a SQLite file, or under HERALD_TEST_ENGINE=postgres a fresh PostgreSQL database.

setDefaultTimeout(90_000);

const dir = mkdtempSync(join(tmpdir(), "herald-admin-token-"));
const database = await servedDatabase(dir);
const env = { ...database.env, NODE_ENV: "test", LOG_LEVEL: "warn" };
afterAll(async () => {
  await database.drop();
  rmSync(dir, { recursive: true, force: true });
});

async function run(args: string[]) {
  const p = spawnHerald(args, env);
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { stdout, stderr, code };
}

async function json(args: string[]): Promise<Record<string, any>> {
  const r = await run([...args, "--json"]);
  expect({ args, code: r.code }).toEqual({ args, code: 0 });
  return JSON.parse(r.stdout);
}

test("list shows ids, names and times, never a token; revoke --id N revokes once, audited; bad ids exit 2", async () => {
  const a = await json(["admin-token", "create", "--name", "alice"]);
  const b = await json(["admin-token", "create", "--name", "bob"]);

  const listed = await run(["admin-token", "list", "--json"]);
  expect(listed.stdout).not.toContain(a.token);
  expect(listed.stdout).not.toContain("hat_");
  const tokens = JSON.parse(listed.stdout).tokens;
  expect(tokens.map((t: Record<string, unknown>) => Object.keys(t).sort())).toEqual([
    ["created_at", "id", "last_used_at", "name", "revoked_at"],
    ["created_at", "id", "last_used_at", "name", "revoked_at"],
  ]);
  expect(tokens.map((t: { id: number; name: string; revoked_at: null }) => [t.id, t.name, t.revoked_at])).toEqual([
    [a.id, "alice", null],
    [b.id, "bob", null],
  ]);

  const revoked = await json(["admin-token", "revoke", "--id", String(a.id)]);
  expect(revoked).toMatchObject({ already_revoked: false, sessions_ended: 0, token: { id: a.id, name: "alice" } });
  expect(Date.parse(revoked.token.revoked_at)).toBeGreaterThan(Date.parse(revoked.token.created_at) - 1);
  expect((await json(["admin-token", "revoke", "--id", String(a.id)])).already_revoked).toBe(true);
  const audit = await database.query((q) => q.all("SELECT actor, action, target, details FROM admin_audit WHERE action = 'admin_token.revoke'"));
  expect(audit).toEqual([
    { actor: expect.stringMatching(/^cli:/), action: "admin_token.revoke", target: String(a.id), details: '{"name":"alice","sessions_ended":0}' },
  ]);

  const human = await run(["admin-token", "list"]);
  expect(human.stdout.split("\n")[0]).toMatch(/^id\s+name\s+created_at\s+last_used_at\s+revoked_at$/);
  expect(human.stdout).toContain(revoked.token.revoked_at);

  for (const [args, message] of [
    [["admin-token", "revoke", "--id", "999"], 'Admin token "999" was not found'],
    [["admin-token", "revoke", "--id", "abc"], "--id must be a token id"],
    [["admin-token", "revoke"], "--id is required"],
    [["admin-token", "frob"], "usage: herald admin-token create"],
  ] as Array<[string[], string]>) {
    const r = await run(args);
    expect({ args, code: r.code }).toEqual({ args, code: 2 });
    expect(r.stderr).toContain(message);
    expect(r.stdout).toBe("");
  }
});

test("a token revoked by the CLI while serve runs: its bearer calls get 403 and its session goes to sign-in", async () => {
  const { token, id } = await json(["admin-token", "create", "--name", "carol"]);
  const port = freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = spawnHerald(["serve"], { ...env, PORT: String(port), HOST: "127.0.0.1", JOBS_ENABLED: "0", BOOTSTRAP_CREDENTIALS: "0" });
  try {
    await waitForHttp(`${base}/readyz`);
    const form = await fetch(`${base}/admin/sign-in`);
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(await form.text())![1]!;
    const signIn = await fetch(`${base}/admin/sign-in`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: `herald_signin_csrf=${csrf}` },
      body: new URLSearchParams({ token, csrf_token: csrf }).toString(),
    });
    expect(signIn.status).toBe(303);
    const cookie = signIn.headers
      .getSetCookie()
      .find((c) => c.startsWith("herald_admin_session="))!
      .split(";")[0]!;
    const page = (init: RequestInit) => fetch(`${base}/admin/ops/readiness`, { redirect: "manual", ...init });
    expect((await page({ headers: { cookie } })).status).toBe(200);
    expect((await page({ headers: { authorization: `Bearer ${token}` } })).status).toBe(200);

    const revoked = await json(["admin-token", "revoke", "--id", String(id)]);
    expect(revoked).toMatchObject({ already_revoked: false, sessions_ended: 1 });

    const bearer = await fetch(`${base}/admin/backups`, { headers: { authorization: `Bearer ${token}` } });
    expect(bearer.status).toBe(403);
    expect(((await bearer.json()) as { error: string }).error).toBe("forbidden");
    const session = await page({ headers: { cookie, accept: "text/html" } });
    expect(session.status).toBe(303);
    expect((await page({ headers: { cookie } })).status).toBe(403);
    expect(session.headers.get("location")).toBe("/admin/sign-in?next=%2Fadmin%2Fops%2Freadiness");
  } finally {
    server.kill("SIGTERM");
    expect(await exitWithin(server, 20_000)).not.toBeNull();
  }
});
