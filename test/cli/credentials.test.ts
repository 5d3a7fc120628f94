// `herald credentials new` as a real process (issue 74, item 4): the way back to working credentials when the first
// start's banner is lost. A first `herald serve` prints its banner, which this test throws away; the next start logs
// that no credential has been used yet, with a command that runs as printed in a fresh shell (`env -i`, PATH only:
// no `herald` function, no `bun` on PATH). That command prints the banner's block for three new credentials; its
// paste-in lines and its examples, pasted into another clean shell, succeed against the running server. Nothing is
// revoked unless asked (`--revoke-unused` ends only the credentials never used); production asks for
// `--production`. On the test run's engine: a SQLite file, or under HERALD_TEST_ENGINE=postgres a fresh database
// (whose DATABASE_URL the hint names rather than prints, so the clean shell is given that one variable).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exitWithin, freePort, spawnHerald } from "../support/process";
import { servedDatabase } from "../support/served-database";
import { jsonObjectsIn } from "../docs/markdown";

setDefaultTimeout(120_000);

/** A shell's PATH without node_modules/.bin (and no bun anywhere on it). */
const CLEAN_PATH = "/usr/bin:/bin";
const dir = mkdtempSync(join(tmpdir(), "herald-credentials-"));
const database = await servedDatabase(dir, join("data", "herald.db"));
const port = freePort();
const base = `http://127.0.0.1:${port}`;
const env = {
  NODE_ENV: "development",
  ...database.env,
  PORT: String(port),
  HOST: "127.0.0.1",
  LOG_LEVEL: "info",
  JOBS_ENABLED: "0",
  BOOTSTRAP_CREDENTIALS: "1",
};

type Server = { proc: ReturnType<typeof spawnHerald>; out: { stdout: string } };
let server: Server | undefined;
/** The first start's banner (thrown away: "lost"), and the later start's hint line. */
let lostBanner = "";
let hint: { msg: string; note: string; command: string; also_set?: string[] };

function start(): Server {
  const proc = spawnHerald(["serve"], env);
  const out = { stdout: "" };
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of proc.stdout) out.stdout += decoder.decode(chunk, { stream: true });
  })();
  return { proc, out };
}

async function listening(s: Server): Promise<void> {
  for (let i = 0; i < 3000 && !s.out.stdout.includes('"msg":"herald listening"'); i++) {
    if (s.proc.exitCode !== null) throw new Error(`herald serve exited ${s.proc.exitCode}: ${s.out.stdout}`);
    await Bun.sleep(10);
  }
  if (!s.out.stdout.includes('"msg":"herald listening"')) throw new Error(`herald serve did not listen: ${s.out.stdout}`);
}

const logLines = (stdout: string) =>
  stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, any>);

beforeAll(async () => {
  const first = start();
  await listening(first);
  lostBanner = first.out.stdout;
  first.proc.kill("SIGTERM");
  expect(await exitWithin(first.proc, 30_000)).not.toBeNull();
  server = start();
  await listening(server);
  hint = logLines(server.out.stdout).find((l) => l.msg === "no credential of this database has been used yet") as typeof hint;
});

afterAll(async () => {
  server?.proc.kill("SIGTERM");
  if (server) await exitWithin(server.proc, 30_000);
  await database.drop();
  rmSync(dir, { recursive: true, force: true });
});

/** `script` in bash started by `env -i` with PATH only (and `extra`), from a scratch directory outside the checkout. */
async function cleanShell(script: string, extra: Record<string, string> = {}) {
  const vars = Object.entries({ PATH: CLEAN_PATH, ...extra }).map(([k, v]) => `${k}=${v}`);
  const p = Bun.spawn(["env", "-i", ...vars, "bash", "-c", script], { cwd: dir, stdout: "pipe", stderr: "pipe" });
  const out = Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  const code = await exitWithin(p, 90_000);
  const [stdout, stderr] = await out;
  return { code, stdout, stderr };
}

/** The clean shell gets only what the hint names and does not print (DATABASE_URL on PostgreSQL). */
const named = () => Object.fromEntries((hint.also_set ?? []).map((name) => [name, (env as Record<string, string>)[name]!]));

/** The indented lines of the banner section that starts with `heading`, up to the next line that is not indented. */
function section(banner: string, heading: string): string {
  const lines = banner.split("\n");
  const at = lines.findIndex((l) => l.startsWith(heading));
  if (at === -1) throw new Error(`no "${heading}" section in:\n${banner}`);
  const body: string[] = [];
  for (const l of lines.slice(at + 1)) {
    if (!l.startsWith("  ")) break;
    body.push(l.slice(2));
  }
  return body.join("\n");
}

const bearer = (token: string) => fetch(`${base}/admin/partners/keys`, { headers: { authorization: `Bearer ${token}` } });

describe("herald credentials new", () => {
  test("the start-up hint names a command that runs as printed from a clean shell; its block, pasted into another, runs its examples", async () => {
    expect(lostBanner).toContain("Herald first start");
    expect(hint).toBeDefined();
    // The absolute command, not the lost banner's `herald` function, nor a bare `bun`.
    expect(hint.command).toMatch(/^HERALD_DB_PATH='\/[^']+' PUBLIC_BASE_URL='http:\/\/localhost:\d+' '\/[^']+' .*credentials new$/);
    expect(hint.command).not.toMatch(/(^| )(herald|bun) /);
    expect(hint.also_set).toEqual(database.engine === "postgres" ? ["DATABASE_URL"] : undefined);
    expect(hint.note).toContain(database.engine === "postgres" ? "with DATABASE_URL set" : "from any shell");

    const made = await cleanShell(hint.command, named());
    expect({ code: made.code, stderr: made.stderr }).toEqual({ code: 0, stderr: "" });
    const banner = made.stdout;
    expect(banner).toContain("Herald: new credentials");
    expect(banner).toContain("Nothing was revoked");
    expect(banner).toContain(`  herald() { '`);
    for (const name of ["HERALD", "HERALD_KEY_ID", "HERALD_SECRET", "HERALD_SANDBOX_KEY_ID", "HERALD_SANDBOX_SECRET", "HERALD_ADMIN_TOKEN"])
      expect(banner).toMatch(new RegExp(`export (.* )?${name}=`));

    // As a reader pastes them: the lines, then the examples, in a fresh clean shell with nothing of the database's.
    const tried = await cleanShell(`set -euo pipefail\n${section(banner, "Paste these lines")}\n${section(banner, "Then try")}\n`);
    expect({ code: tried.code, stderr: tried.stderr }).toEqual({ code: 0, stderr: "" });
    const answers = jsonObjectsIn(tried.stdout);
    expect(answers.map((a) => a.success)).toEqual([true, true, true]);

    // Nothing revoked: the lost banner's credentials are still active (not used here: the next test revokes them).
    const newToken = /token {2}: (hat_\S+)/.exec(banner)![1]!;
    expect((await bearer(newToken)).status).toBe(200);
    const tokens = await database.query((q) => q.all<{ name: string; revoked_at: string | null }>("SELECT name, revoked_at FROM admin_tokens ORDER BY id"));
    expect(tokens).toEqual([
      { name: "first-start", revoked_at: null },
      { name: "credentials-new", revoked_at: null },
    ]);
    const keys = await database.query((q) =>
      q.all<{ partner: string; mode: string; status: string }>("SELECT partner, mode, status FROM partner_keys ORDER BY created_at, key_id"),
    );
    expect(keys.map((k) => `${k.partner} ${k.mode} ${k.status}`).sort()).toEqual([
      "Local Dev live active",
      "Local Dev live active",
      "Local Dev sandbox active",
      "Local Dev sandbox active",
    ]);
  });

  test("--revoke-unused ends only the credentials never used, audited; --json gives the credentials and the block", async () => {
    // The lost banner's: one used now (its live key), the others never.
    const usedKey = /key id : (hk_live_\S+)/.exec(lostBanner)![1]!;
    const lostSandbox = /key id : (hk_test_\S+)/.exec(lostBanner)![1]!;
    await database.query((q) => q.run("UPDATE partner_keys SET last_used_at = ? WHERE key_id = ?", [new Date().toISOString(), usedKey]));
    const before = await database.query((q) =>
      q.all<{ id: number; name: string; last_used_at: string | null }>("SELECT id, name, last_used_at FROM admin_tokens ORDER BY id"),
    );
    const unusedTokens = before.filter((t) => t.last_used_at === null).map((t) => t.id);

    const r = await cleanShell(`${hint.command} --revoke-unused --json`, named());
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({
      success: true,
      partner: "Local Dev",
      admin_token: { name: "credentials-new" },
    });
    // Not inside toMatchObject: bun 1.4.5's writes its asymmetric matcher into the object it checks.
    expect([out.live.key_id, out.sandbox.key_id]).toEqual([expect.stringMatching(/^hk_live_/), expect.stringMatching(/^hk_test_/)]);
    expect(out.revoked.keys).toContain(lostSandbox);
    expect(out.revoked.keys).not.toContain(usedKey);
    expect(out.revoked.admin_tokens.sort()).toEqual(unusedTokens.sort());
    expect(out.banner).toContain("Revoked, as never used (--revoke-unused):");
    expect(out.banner).toContain(`export HERALD_ADMIN_TOKEN='${out.admin_token.token}'`);

    // The lost banner's token was never used: revoked. The one the test above used (its examples): kept.
    expect(unusedTokens).toHaveLength(1);
    expect((await bearer(/token {2}: (hat_\S+)/.exec(lostBanner)![1]!)).status).toBe(403);
    expect((await bearer(out.admin_token.token)).status).toBe(200);
    const kept = await database.query((q) => q.all<{ name: string }>("SELECT name FROM admin_tokens WHERE revoked_at IS NULL ORDER BY id"));
    expect(kept.map((t) => t.name)).toEqual(["credentials-new", "credentials-new"]);
    const statuses = await database.query((q) => q.all<{ key_id: string; status: string }>("SELECT key_id, status FROM partner_keys"));
    const status = Object.fromEntries(statuses.map((k) => [k.key_id, k.status]));
    expect([status[usedKey], status[lostSandbox], status[out.live.key_id], status[out.sandbox.key_id]]).toEqual(["active", "disabled", "active", "active"]);
    const audit = await database.query((q) =>
      q.all<{ action: string; target: string }>("SELECT action, target FROM admin_audit WHERE actor LIKE 'cli:%' AND target = ?", [lostSandbox]),
    );
    expect(audit.map((a) => a.action)).toContain("partner_key.disable");
  });

  test("refused with the usage, writing nothing: another subcommand; production without --production. With it, production makes them", async () => {
    const count = () => database.query(async (q) => (await q.get<{ n: number }>("SELECT count(*) AS n FROM partner_keys"))!.n);
    const before = await count();
    const masterKey = readFileSync(join(dir, "data", "master.key"), "utf8").trim();
    const production = { ...env, NODE_ENV: "production", HERALD_MASTER_KEY: masterKey, PUBLIC_BASE_URL: "https://herald.example.com", LOG_LEVEL: "warn" };
    const run = async (args: string[], e: Record<string, string>) => {
      const p = spawnHerald(args, e);
      const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
      return { stdout, stderr, code };
    };
    const wrong = await run(["credentials", "make"], env);
    expect({ code: wrong.code, stdout: wrong.stdout }).toEqual({ code: 2, stdout: "" });
    expect(wrong.stderr).toContain("usage: herald credentials new");
    const refused = await run(["credentials", "new"], production);
    expect({ code: refused.code, stdout: refused.stdout }).toEqual({ code: 2, stdout: "" });
    expect(refused.stderr).toContain("pass --production");
    expect(await count()).toBe(before);

    const made = await run(["credentials", "new", "--production", "--partner", "Ops Check"], production);
    expect({ code: made.code, stderr: made.stderr }).toEqual({ code: 0, stderr: "" });
    expect(made.stdout).toContain("export HERALD='https://herald.example.com'");
    expect(await count()).toBe(before + 2);
  });
});
