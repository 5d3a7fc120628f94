// A restored database and its master key, with real processes: `herald restore` names the key a backup needs
// and refuses one that does not fit; a server started on a restored database without its key says so (refuses
// to start in production; elsewhere /readyz 503) and answers partners 503 master_key_mismatch, never 500.
// SQLite only on either engine's run: it restores SQLite backups (PostgreSQL's are restored with its own tools).
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SecretBox } from "../../src/auth/secret-box";
import { signRequest } from "../../src/client/sign";
import { createTestApp } from "../support/app";
import { createAdminToken, createKey, type TestKey } from "../support/partner";
import { exitWithin, freePort, spawnHerald, waitForHttp } from "../support/process";

setDefaultTimeout(90_000);

const KEY_A = "a1".repeat(32);
const KEY_B = "b2".repeat(32);
const FP_A = new SecretBox(Buffer.from(KEY_A, "hex")).fingerprint;
const FP_B = new SecretBox(Buffer.from(KEY_B, "hex")).fingerprint;
const root = mkdtempSync(join(tmpdir(), "herald-restore-key-"));
let origin = "";
let backup = "";
let key: TestKey;
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  if (origin) rmSync(origin, { recursive: true, force: true });
});

/** The environment of a herald over `dir`; no HERALD_MASTER_KEY unless given (then the dev key file is used). */
const envFor = (dir: string, extra: Record<string, string> = {}) => ({
  NODE_ENV: "test",
  LOG_LEVEL: "warn",
  JOBS_ENABLED: "0",
  HOST: "127.0.0.1",
  HERALD_DB_PATH: join(dir, "herald.db"),
  ...extra,
});

async function run(args: string[], env: Record<string, string>) {
  const p = spawnHerald(args, env);
  const [stdout, stderr] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  return { stdout, stderr, code: await exitWithin(p, 60_000) };
}

beforeAll(async () => {
  // A database made under KEY_A with a partner key, and a backup of it.
  const h = createTestApp({ env: { HERALD_MASTER_KEY: KEY_A } });
  origin = h.dir;
  try {
    key = await createKey(h, { partner: "Acme" });
    const r = await h.json("/admin/backup/run", { method: "POST", headers: { authorization: `Bearer ${await createAdminToken(h)}` } });
    expect(r.status).toBe(200);
    backup = r.body.backup.path;
  } finally {
    await h.ctx.requestLog.stop();
    await h.ctx.store.close();
  }
});

test("restore into an empty folder without the key, then serve: /readyz 503 names the key, a signed partner call is 503 (it was 500)", async () => {
  const dir = join(root, "no-key");
  const restored = await run(["restore", backup], envFor(dir));
  expect(restored.code).toBe(0);
  expect(restored.stdout).toContain(`master key: this backup needs the master key with fingerprint ${FP_A}; no key here to check it against`);
  expect(restored.stdout).toContain(`stay unreadable until herald runs with the key they were made with (fingerprint ${FP_A})`);

  // Outside production the server starts (with a freshly generated development key) but is not ready.
  const port = freePort();
  const proc = spawnHerald(["serve"], envFor(dir, { PORT: String(port) }));
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(`${base}/healthz`);
    const ready = await fetch(`${base}/readyz`);
    const body = (await ready.json()) as { ready: boolean; checks: Record<string, { ok: boolean; detail: string }> };
    expect(ready.status).toBe(503);
    expect(body.checks.master_key!.ok).toBe(false);
    expect(body.checks.master_key!.detail).toContain(`is not the one this database was made with (fingerprint ${FP_A})`);
    const target = "/api/partner/status";
    const signed = signRequest({
      keyId: key.keyId,
      secret: key.secret,
      method: "GET",
      target,
      body: "",
      nonce: null,
      timestamp: Math.floor(Date.now() / 1000),
    });
    const res = await fetch(`${base}${target}`, { headers: signed.headers as unknown as Record<string, string> });
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: string }).error).toBe("master_key_mismatch");
  } finally {
    proc.kill("SIGTERM");
    const [, logs] = await Promise.all([proc.exited, new Response(proc.stdout).text()]);
    expect(logs).toContain("master key mismatch");
    expect(logs).not.toContain(KEY_A);
  }

  // In production the same database with another key refuses to start, naming the fingerprint it expects.
  const prod = await run(
    ["serve"],
    envFor(dir, { NODE_ENV: "production", HERALD_MASTER_KEY: KEY_B, PUBLIC_BASE_URL: "https://herald.example.com", PORT: String(freePort()) }),
  );
  expect(prod.code).toBe(78);
  expect(prod.stderr).toContain(`herald: refusing to start: the master key in use (fingerprint ${FP_B})`);
  expect(prod.stderr).toContain(`This database expects the master key with fingerprint ${FP_A}.`);
  expect(prod.stderr + prod.stdout).not.toContain(KEY_B);
});

test("in production with the right key the restored database serves", async () => {
  const dir = join(root, "no-key");
  const port = freePort();
  // No load balancer to wait for: stop at once rather than after production's drain delay.
  const proc = spawnHerald(
    ["serve"],
    envFor(dir, {
      NODE_ENV: "production",
      HERALD_MASTER_KEY: KEY_A,
      PUBLIC_BASE_URL: "https://herald.example.com",
      PORT: String(port),
      SHUTDOWN_DRAIN_DELAY_MS: "0",
    }),
  );
  try {
    await waitForHttp(`http://127.0.0.1:${port}/readyz`);
  } finally {
    proc.kill("SIGTERM");
    expect(await exitWithin(proc, 30_000)).toBe(0);
  }
});

test("restore refuses a key that does not fit (nothing changed) and checks --master-key-file", async () => {
  const dir = join(root, "checked");
  const wrong = await run(["restore", backup, "--json"], envFor(dir, { HERALD_MASTER_KEY: KEY_B }));
  expect(wrong.code).toBe(1);
  expect(JSON.parse(wrong.stdout)).toMatchObject({ success: false, error: "master_key_mismatch" });
  expect(wrong.stderr).toContain(`this backup needs the master key with fingerprint ${FP_A}, but HERALD_MASTER_KEY has fingerprint ${FP_B}`);
  expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);

  const keyFile = join(root, "key-a.hex");
  writeFileSync(keyFile, `${KEY_A}\n`);
  const right = await run(["restore", backup, "--master-key-file", keyFile, "--json"], envFor(dir, { HERALD_MASTER_KEY: KEY_B }));
  expect(right.code).toBe(0);
  expect(JSON.parse(right.stdout).master_key).toEqual({
    required_fingerprint: FP_A,
    checked: "check_value",
    checked_key: { source: `--master-key-file ${keyFile}`, fingerprint: FP_A },
    summary: `this backup needs the master key with fingerprint ${FP_A}; --master-key-file ${keyFile} (fingerprint ${FP_A}) matches`,
  });
  // The key was checked, but the environment still holds another: restore says to start serve with the file's key.
  expect(JSON.parse(right.stdout).warnings).toEqual([
    `HERALD_MASTER_KEY here has fingerprint ${FP_B}, not ${FP_A}: start herald serve with the key from --master-key-file ${keyFile}`,
  ]);

  const badFile = join(root, "not-a-key.txt");
  writeFileSync(badFile, "hello\n");
  const bad = await run(["restore", backup, "--master-key-file", badFile], envFor(join(root, "bad")));
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain(`--master-key-file ${badFile} does not hold a master key`);
});
