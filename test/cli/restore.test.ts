// Backups operators can take away, end to end with real processes: backups taken, downloaded over HTTP from a
// running `herald serve`, checked against their digests, and restored with `herald restore` into a fresh folder
// that then serves the same balances; restore refuses a held database, a damaged file and a wrong sha256.
// SQLite only on either engine's run: backups and restore are the SQLite file's (PostgreSQL: 409 backup_not_on_postgres).
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { signRequest } from "../../src/client/sign";
import { credit, createUser } from "../salutes/support";
import { createTestApp } from "../support/app";
import { createAdminToken, createKey, signedJson, type TestKey } from "../support/partner";
import { exitWithin, freePort, spawnHerald, waitForHttp } from "../support/process";

setDefaultTimeout(90_000);

const MASTER_KEY = "cd".repeat(32);
const ADMIN_TOKEN = "restore-test-admin-token-0123456789abcdef";
const root = mkdtempSync(join(tmpdir(), "herald-restore-"));
let origin = "";
const downloads = join(root, "downloads");
mkdirSync(downloads);
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  if (origin) rmSync(origin, { recursive: true, force: true });
});

const baseEnv = { NODE_ENV: "test", LOG_LEVEL: "warn", HERALD_MASTER_KEY: MASTER_KEY, JOBS_ENABLED: "0", HOST: "127.0.0.1" };
const envFor = (dir: string) => ({ ...baseEnv, HERALD_DB_PATH: join(dir, "herald.db") });

async function run(args: string[], dir: string) {
  const p = spawnHerald(args, envFor(dir));
  const [stdout, stderr] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  return { stdout, stderr, code: await exitWithin(p, 60_000) };
}

async function startServer(dir: string) {
  const port = freePort();
  const proc = spawnHerald(["serve"], { ...envFor(dir), PORT: String(port), ADMIN_TOKEN });
  const base = `http://127.0.0.1:${port}`;
  await waitForHttp(`${base}/healthz`);
  return {
    base,
    async stop() {
      proc.kill("SIGTERM");
      expect(await exitWithin(proc, 30_000)).toBe(0);
    },
  };
}

/** A signed GET at the real time, as a partner's client sends it to a real server. */
async function balanceOver(base: string, key: TestKey, user: string): Promise<number> {
  const target = `/api/salutes/balance?user_id=${user}`;
  const signed = signRequest({ keyId: key.keyId, secret: key.secret, method: "GET", target, body: "", nonce: null, timestamp: Math.floor(Date.now() / 1000) });
  const res = await fetch(`${base}${target}`, { headers: signed.headers as unknown as Record<string, string> });
  const body = (await res.json()) as { balance: number };
  expect(res.status).toBe(200);
  return body.balance;
}

const sha256Hex = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

let key: TestKey;
let user: string;
let balance: number;
let newest: { name: string; sha256: string };
let downloaded: string;

beforeAll(async () => {
  // The state to carry over: a partner key, a user with salutes credited, and two backups of it. The app's own
  // folder then becomes the origin server's data folder.
  const h = createTestApp({ env: { HERALD_MASTER_KEY: MASTER_KEY } });
  origin = h.dir;
  try {
    key = await createKey(h, { partner: "Acme" });
    user = await createUser(h);
    expect((await credit(h, key, { user_id: user, amount: 12.5, reason: "quest_reward", source: "game.arena" })).status).toBe(200);
    expect((await credit(h, key, { user_id: user, amount: 30, reason: "quest_reward", source: "game.arena" })).status).toBe(200);
    balance = (await signedJson(h, key, "GET", `/api/salutes/balance?user_id=${user}`)).body.balance;
    expect(balance).toBe(42.5);
    const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
    for (let i = 0; i < 2; i++) {
      expect((await h.json("/admin/backup/run", { method: "POST", headers: auth })).status).toBe(200);
      h.clock.advanceSeconds(60);
    }
  } finally {
    // Not h.close(), which deletes the folder: the request log is flushed and the database closed, files kept.
    await h.ctx.requestLog.stop();
    await h.ctx.store.close();
  }
});

test("a backup downloaded from a running server matches its digests; restore refuses while that server runs", async () => {
  const server = await startServer(origin);
  try {
    expect(await balanceOver(server.base, key, user)).toBe(balance);
    const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const list = (await (await fetch(`${server.base}/admin/backups`, { headers: auth })).json()) as { backups: Array<{ name: string; sha256: string }> };
    expect(list.backups).toHaveLength(2);
    newest = list.backups[0]!;

    const res = await fetch(`${server.base}/admin/backups/${newest.name}`, { headers: auth });
    expect(res.status).toBe(200);
    const bytes = new Uint8Array(await res.arrayBuffer());
    const manifest = JSON.parse(readFileSync(join(origin, "backups", `${newest.name}.json`), "utf8"));
    expect(sha256Hex(bytes)).toBe(res.headers.get("x-backup-sha256")!);
    expect(sha256Hex(bytes)).toBe(manifest.sha256);
    expect(sha256Hex(bytes)).toBe(newest.sha256);
    expect(res.headers.get("digest")).toBe(`sha-256=${Buffer.from(newest.sha256, "hex").toString("base64")}`);
    expect(Number(res.headers.get("content-length"))).toBe(bytes.byteLength);
    downloaded = join(downloads, newest.name);
    writeFileSync(downloaded, bytes);

    const traversal = await fetch(`${server.base}/admin/backups/..%2Fherald.db`, { headers: auth });
    expect(traversal.status).toBe(400);

    const refused = await run(["restore", downloaded], origin);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("is in use by another process");
    expect(readdirSync(origin).filter((f) => f.includes(".replaced-") || f.includes(".restore-"))).toEqual([]);
    // The server did not notice: it still answers from the same database.
    expect(await balanceOver(server.base, key, user)).toBe(balance);
  } finally {
    await server.stop();
  }
});

test("restore into a fresh folder, checked against --sha256, serves the same balances", async () => {
  const fresh = join(root, "fresh");
  const restored = await run(["restore", downloaded, "--sha256", newest.sha256.toUpperCase(), "--json"], fresh);
  expect(restored.code).toBe(0);
  const out = JSON.parse(restored.stdout);
  expect(out).toMatchObject({
    success: true,
    restored: { from: downloaded, to: join(fresh, "herald.db"), sha256: newest.sha256, integrity: "ok", sha256_checked_against: ["--sha256"] },
    replaced: [],
  });
  expect(sha256Hex(readFileSync(join(fresh, "herald.db")))).toBe(newest.sha256);

  const server = await startServer(fresh);
  try {
    expect(await balanceOver(server.base, key, user)).toBe(balance);
  } finally {
    await server.stop();
  }
});

test("restore over a stopped server's database keeps the replaced one aside and checks the manifest beside FILE", async () => {
  copyFileSync(join(origin, "backups", `${newest.name}.json`), `${downloaded}.json`);
  const before = sha256Hex(readFileSync(join(origin, "herald.db")));
  const restored = await run(["restore", downloaded], origin);
  expect(restored.code).toBe(0);
  expect(restored.stdout).toContain(`matches manifest ${newest.name}.json`);
  expect(restored.stdout).toContain("moved aside:");
  const aside = readdirSync(origin).filter((f) => f.startsWith("herald.db.replaced-"));
  expect(aside).toHaveLength(1); // folded into one file: its WAL was checkpointed before it was moved
  const replaced = new Database(join(origin, aside[0]!), { readonly: true });
  try {
    expect(replaced.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
    expect(replaced.query("SELECT count(*) AS n FROM partner_users").get()).toEqual({ n: 1 });
  } finally {
    replaced.close();
  }
  expect(before).not.toBe(newest.sha256);
  expect(sha256Hex(readFileSync(join(origin, "herald.db")))).toBe(newest.sha256);
  expect(existsSync(join(origin, "herald.db-wal"))).toBe(false);
  rmSync(`${downloaded}.json`);
});

test("restore refuses a damaged file, a file that is not SQLite, and a sha256 that does not match", async () => {
  const target = join(root, "untouched");
  const bytes = readFileSync(downloaded);
  // Overwrite pages in the middle of the file: the header is intact, the b-trees are not.
  const damaged = Buffer.from(bytes);
  for (let i = 4096 * 2; i < Math.min(damaged.length, 4096 * 40); i++) damaged[i] = (i * 7919) & 0xff;
  const damagedPath = join(downloads, "damaged.db");
  writeFileSync(damagedPath, damaged);
  const r1 = await run(["restore", damagedPath], target);
  expect(r1.code).toBe(1);
  expect(r1.stderr).toContain("integrity_check");

  const textPath = join(downloads, "notes.db");
  writeFileSync(textPath, "hello, not a database\n");
  const r2 = await run(["restore", textPath], target);
  expect(r2.code).toBe(1);
  expect(r2.stderr).toContain("is not a SQLite database");

  const r3 = await run(["restore", downloaded, "--sha256", "0".repeat(64), "--json"], target);
  expect(r3.code).toBe(1);
  expect(JSON.parse(r3.stdout)).toMatchObject({ success: false, error: "checksum_mismatch" });
  expect(r3.stderr).toContain(`has sha256 ${newest.sha256}, but --sha256 says ${"0".repeat(64)}`);

  // A manifest beside the file that names another hash: refused the same way.
  writeFileSync(
    `${downloaded}.json`,
    JSON.stringify({ sha256: "f".repeat(64), size_bytes: bytes.length, created_at: "2026-01-01T00:00:00.000Z", integrity: "ok" }),
  );
  const r4 = await run(["restore", downloaded], target);
  rmSync(`${downloaded}.json`);
  expect(r4.code).toBe(1);
  expect(r4.stderr).toContain(`manifest ${newest.name}.json says ${"f".repeat(64)}`);

  const missing = await run(["restore", join(downloads, "nope.db")], target);
  expect(missing.code).toBe(1);
  expect(missing.stderr).toContain("does not exist");
  // Nothing was written anywhere by a refusal.
  expect(existsSync(target) ? readdirSync(target) : []).toEqual([]);
});

test("restore's usage: --help, one FILE, a 64-hex --sha256, no unknown flags", async () => {
  const help = await run(["restore", "--help"], root);
  expect(help.code).toBe(0);
  expect(help.stdout).toContain("Usage: herald restore FILE [--sha256 HEX]");
  const none = await run(["restore"], root);
  expect(none.code).toBe(2);
  expect(none.stderr).toContain("restore takes one FILE");
  const unknown = await run(["restore", downloaded, "--force"], root);
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain("unknown option --force for herald restore");
  const short = await run(["restore", downloaded, "--sha256", "abc"], root);
  expect(short.code).toBe(2);
  expect(short.stderr).toContain("--sha256 takes the 64 hex characters");
});
