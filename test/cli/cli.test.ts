import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createHash, createHmac } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, spawnHerald, waitForHttp } from "../support/process";
import { servedDatabase } from "../support/served-database";
import { reportOptional } from "../support/skipped";

// Every test here spawns real processes (one per command, seconds each on a loaded machine); bun's default is
// 5 s per test and bunfig.toml has no setting that changes it.
setDefaultTimeout(60_000);

// Every command runs against one database of the test run's engine: a SQLite file, or under
// HERALD_TEST_ENGINE=postgres a fresh PostgreSQL database (DATABASE_URL; HERALD_DB_PATH is set as well, and unused).
const dir = mkdtempSync(join(tmpdir(), "herald-cli-"));
const database = await servedDatabase(dir);
const env = { ...database.env, NODE_ENV: "test", LOG_LEVEL: "warn" };
afterAll(async () => {
  await database.drop();
  rmSync(dir, { recursive: true, force: true });
});

async function run(args: string[], extraEnv: Record<string, string> = {}) {
  const p = spawnHerald(args, { ...env, ...extraEnv });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { stdout, stderr, code };
}

// On PostgreSQL the test cluster's database comes already migrated (from its template), so the first run here
// applies nothing; migrating an empty PostgreSQL database is in postgres.test.ts.
test("migrate creates the database and reports in JSON", async () => {
  const r = await run(["migrate", "--json"]);
  expect(r.code).toBe(0);
  const out = JSON.parse(r.stdout);
  expect(out).toMatchObject({ success: true, db: database.engine === "sqlite" ? database.path : new URL(database.env.DATABASE_URL!).toString() });
  expect(out.total).toBeGreaterThanOrEqual(1);
  const again = JSON.parse((await run(["migrate", "--json"])).stdout);
  expect(again.applied).toBe(0);
});

test("config prints the effective configuration, and a bad value stops with a clear message", async () => {
  const ok = await run(["config", "--json"], { PORT: "4321" });
  expect(ok.code).toBe(0);
  expect(JSON.parse(ok.stdout).config).toMatchObject({ PORT: "4321", HERALD_DB_PATH: database.path });
  const human = await run(["config"]);
  expect(human.stdout).toContain("MAX_BODY_BYTES");

  // A variable Herald no longer reads is named on stderr, with what to do; stdout stays one JSON document.
  expect(ok.stderr).not.toContain("no longer read");
  const retired = await run(["config", "--json"], { HERALD_PG_PREVIEW: "1" });
  expect(retired.code).toBe(0);
  expect(JSON.parse(retired.stdout).success).toBe(true);
  expect(retired.stderr).toContain("note: HERALD_PG_PREVIEW is set but no longer read: PostgreSQL serves every operation now");

  const bad = await run(["config"], { PORT: "not-a-port" });
  expect(bad.code).toBe(78);
  expect(bad.stderr).toContain('PORT="not-a-port" is not valid: expected an integer from 0 to 65535');
  const badServe = await run(["serve"], { LOG_LEVEL: "chatty" });
  expect(badServe.code).toBe(78);
  expect(badServe.stderr).toContain("LOG_LEVEL");
});

test("jobs list and jobs run work against the same database file", async () => {
  const list = await run(["jobs", "list", "--json"]);
  expect(list.code).toBe(0);
  const names = JSON.parse(list.stdout).jobs.map((j: { name: string }) => j.name);
  expect(names).toContain("request-log-prune");

  const ran = await run(["jobs", "run", "request-log-prune", "--json"]);
  expect(ran.code).toBe(0);
  expect(JSON.parse(ran.stdout).run).toMatchObject({ name: "request-log-prune", ok: true });
  const after = JSON.parse((await run(["jobs", "list", "--json"])).stdout).jobs.find((j: { name: string }) => j.name === "request-log-prune");
  expect(after.last_run.ok).toBe(true);

  const unknown = await run(["jobs", "run", "nope"]);
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain("unknown job nope");
});

test("version, help and unknown commands", async () => {
  const v = await run(["version", "--json"]);
  expect(JSON.parse(v.stdout).version).toMatch(/^\d+\.\d+\.\d+/);
  const help = await run(["help"]);
  expect(help.stdout).toContain("Usage: herald [<command>] [options]");
  const unknown = await run(["frobnicate"]);
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain("unknown command: frobnicate");
  expect(unknown.stderr).toContain("Usage: herald [<command>] [options]");
  expect(unknown.stdout).toBe("");
});

/** stdout of a --json command: exactly one line holding one JSON object (logs go to stderr). */
function oneJson(stdout: string): Record<string, any> {
  const lines = stdout.split("\n").filter((l) => l !== "");
  expect(lines).toHaveLength(1);
  const value = JSON.parse(lines[0]!);
  expect(typeof value).toBe("object");
  expect(Array.isArray(value)).toBe(false);
  return value;
}

describe("keys and admin-token", () => {
  let created: { key_id: string; secret: string };

  test("keys create --json prints one JSON object with the key id and its secret, nothing else on stdout", async () => {
    const r = await run(["keys", "create", "--partner", "Acme", "--mode", "live", "--scopes", "read,credit", "--ips", "10.0.0.0/8", "--json"]);
    expect(r.code).toBe(0);
    const out = oneJson(r.stdout);
    expect(out.key_id).toMatch(/^hk_live_[0-9a-f]{24}$/);
    expect(out.secret).toMatch(/^hsk_live_[A-Za-z0-9_-]{40}$/);
    expect(out.mode).toBe("live");
    expect([...out.scopes].sort()).toEqual(["credit", "read"]);
    expect(out).toMatchObject({ partner: "Acme", allowed_ips: ["10.0.0.0/8"] });
    created = { key_id: out.key_id, secret: out.secret };
  });

  test("keys list --json lists the key, never its secret", async () => {
    const r = await run(["keys", "list", "--json"]);
    expect(r.code).toBe(0);
    const out = oneJson(r.stdout);
    const key = out.keys.find((k: { key_id: string }) => k.key_id === created.key_id);
    expect(key).toMatchObject({ key_id: created.key_id, partner: "Acme", mode: "live", status: "active", allowed_ips: ["10.0.0.0/8"] });
    expect(key.scopes).toEqual(expect.arrayContaining(["read", "credit"]));
    expect(r.stdout).not.toContain(created.secret);
    expect(r.stdout).not.toContain("hsk_");
    for (const k of out.keys) expect(Object.keys(k)).not.toContain("secret");

    const filtered = oneJson((await run(["keys", "list", "--mode", "sandbox", "--json"])).stdout);
    expect(filtered.keys.map((k: { key_id: string }) => k.key_id)).not.toContain(created.key_id);
  });

  test("keys rotate --overlap-hours 2 --json gives a new secret; the old one stays valid for 2 h", async () => {
    const before = Date.now();
    const r = await run(["keys", "rotate", created.key_id, "--overlap-hours", "2", "--json"]);
    expect(r.code).toBe(0);
    const out = oneJson(r.stdout);
    expect(out.key_id).toBe(created.key_id);
    expect(out.secret).toMatch(/^hsk_live_[A-Za-z0-9_-]{40}$/);
    expect(out.secret).not.toBe(created.secret);
    const validFor = Date.parse(out.previous_secret_valid_until) - before;
    expect(validFor).toBeGreaterThan(2 * 3_600_000 - 60_000);
    expect(validFor).toBeLessThan(2 * 3_600_000 + 60_000);

    const listed = oneJson((await run(["keys", "list", "--json"])).stdout).keys.find((k: { key_id: string }) => k.key_id === created.key_id);
    expect(listed.previous_secret_valid_until).toBe(out.previous_secret_valid_until);
    expect((await run(["keys", "rotate", created.key_id, "--overlap-hours", "25"])).code).toBe(2);
  });

  test("keys disable --json → status disabled; a disabled key cannot be rotated", async () => {
    const r = await run(["keys", "disable", created.key_id, "--reason", "contract ended", "--json"]);
    expect(r.code).toBe(0);
    expect(oneJson(r.stdout).key).toMatchObject({ key_id: created.key_id, status: "disabled", disabled_reason: "contract ended" });
    const rotate = await run(["keys", "rotate", created.key_id, "--json"]);
    expect(rotate.code).toBe(2);
    expect(rotate.stdout).toBe("");
    expect(rotate.stderr).toContain("disabled");
  });

  test("bad input exits 2 with a message on stderr and nothing on stdout", async () => {
    const cases: Array<[string[], string]> = [
      [["keys", "create", "--partner", "Acme", "--mode", "nope", "--scopes", "read", "--json"], "--mode must be sandbox or live"],
      [["keys", "create", "--partner", "Acme", "--mode", "live", "--scopes", "read,fly", "--json"], "unknown scope(s) fly"],
      [["keys", "create", "--partner", "Acme", "--mode", "live", "--scopes", "read", "--ips", "10.0.0.300", "--json"], "10.0.0.300"],
      [["keys", "create", "--mode", "live", "--scopes", "read", "--json"], "--partner is required"],
      [["keys", "disable", "hk_live_000000000000000000000000", "--json"], "hk_live_000000000000000000000000"],
      [["keys", "frob"], "unknown keys subcommand frob"],
      [["admin-token", "create", "--json"], "--name is required"],
    ];
    const results = await Promise.all(cases.map(([args]) => run(args)));
    cases.forEach(([args, message], i) => {
      const r = results[i]!;
      // What the command said when it exited otherwise, so a failure here names its cause.
      expect({ args, code: r.code, said: r.code === 2 ? null : r.stderr }).toEqual({ args, code: 2, said: null });
      expect(r.stderr).toContain(message);
      expect(r.stdout).toBe("");
    });
    const keys = oneJson((await run(["keys", "list", "--json"])).stdout).keys;
    expect(keys).toHaveLength(1); // none of the bad creates left a key behind
  });

  test("admin-token create --name ops --json prints the token once", async () => {
    const r = await run(["admin-token", "create", "--name", "ops", "--json"]);
    expect(r.code).toBe(0);
    const out = oneJson(r.stdout);
    expect(out).toEqual({ token: expect.stringMatching(/^hat_[A-Za-z0-9_-]{43}$/), id: expect.any(Number), name: "ops" });
  });
});

/** The arguments a curl command line passes, split by bash itself (a shell function stands in for curl). */
async function curlArgs(command: string): Promise<string[]> {
  expect(command.startsWith("curl ")).toBe(true);
  const p = Bun.spawn(["bash", "-c", `curl() { printf '%s\\0' "$@"; }\n${command}`], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  expect(err).toBe("");
  expect(code).toBe(0);
  return out.split("\0").slice(0, -1);
}

function parseCurl(args: string[]) {
  const headers: Record<string, string> = {};
  let method = "GET";
  let body: string | null = null;
  let url = "";
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "-X") method = args[++i]!;
    else if (a === "-H") {
      const h = args[++i]!;
      headers[h.slice(0, h.indexOf(":"))] = h.slice(h.indexOf(":") + 1).trim();
    } else if (a === "--data-binary") body = args[++i]!;
    else if (a === "-sS") continue;
    else url = a;
  }
  return { method, headers, body, url };
}

describe("sign", () => {
  test("a signed POST: the curl command's X-Partner-Signature verifies independently", async () => {
    const secret = "hsk_test_cli_secret_0123456789";
    const r = await run([
      "sign",
      "--key",
      "hk_test_0123456789abcdef01234567",
      "--secret",
      secret,
      "POST",
      "http://localhost:3000/api/salutes/credit",
      '{"a":1}',
      "--json",
    ]);
    expect(r.code).toBe(0);
    const out = oneJson(r.stdout);
    const curl = parseCurl(await curlArgs(out.curl));
    expect(curl).toMatchObject({ method: "POST", body: '{"a":1}', url: "http://localhost:3000/api/salutes/credit" });
    expect(curl.headers).toEqual(out.headers);
    const h = curl.headers;
    expect(h["X-Partner-Key"]).toBe("hk_test_0123456789abcdef01234567");
    expect(h["X-Partner-Nonce"]).toMatch(/^[0-9a-f]{32}$/);
    expect(h["Idempotency-Key"]).toMatch(/^[\x21-\x7e]{1,255}$/);
    expect(h["Content-Type"]).toBe("application/json");
    expect(Math.abs(Number(h["X-Partner-Timestamp"]) - Date.now() / 1000)).toBeLessThan(30);

    // Rebuilt from the wire values with node:crypto only, not with Herald's signing code.
    const target = new URL(curl.url).pathname + new URL(curl.url).search;
    const bodySha = createHash("sha256").update(curl.body!).digest("hex");
    const canonical = ["POST", target, h["X-Partner-Timestamp"], h["X-Partner-Nonce"], bodySha].join("\n");
    expect(out.canonical).toBe(canonical);
    expect(h["X-Partner-Signature"]).toBe(createHmac("sha256", secret).update(canonical).digest("hex"));
    expect(createHmac("sha256", "another secret").update(canonical).digest("hex")).not.toBe(h["X-Partner-Signature"]);

    // Each run is a new attempt: new nonce, new Idempotency-Key.
    const again = oneJson(
      (
        await run([
          "sign",
          "--key",
          "hk_test_0123456789abcdef01234567",
          "--secret",
          secret,
          "POST",
          "http://localhost:3000/api/salutes/credit",
          '{"a":1}',
          "--json",
        ])
      ).stdout,
    );
    expect(again.headers["X-Partner-Nonce"]).not.toBe(h["X-Partner-Nonce"]);
    expect(again.headers["Idempotency-Key"]).not.toBe(h["Idempotency-Key"]);
  });

  test("a signed GET has no nonce, no Idempotency-Key and the empty-body hash; bad usage exits 2", async () => {
    const out = oneJson((await run(["sign", "--key", "K", "--secret", "S", "get", "http://localhost:3000/api/salutes/balance?user_id=42", "--json"])).stdout);
    expect(out.method).toBe("GET");
    expect(Object.keys(out.headers).sort()).toEqual(["X-Partner-Key", "X-Partner-Signature", "X-Partner-Timestamp"]);
    const canonical = `GET\n/api/salutes/balance?user_id=42\n${out.headers["X-Partner-Timestamp"]}\n\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855`;
    expect(out.canonical).toBe(canonical);
    expect(out.headers["X-Partner-Signature"]).toBe(createHmac("sha256", "S").update(canonical).digest("hex"));

    const missing = await run(["sign", "--key", "K", "GET", "http://localhost:3000/x"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("usage: herald sign");
    const relative = await run(["sign", "--key", "K", "--secret", "S", "GET", "/api/x"]);
    expect(relative.code).toBe(2);
    expect(relative.stderr).toContain("not an absolute URL");
  });

  if (!Bun.which("curl")) reportOptional("test/cli/cli.test.ts", "the printed curl command works against a running server", "curl is not on PATH");
  test.skipIf(!Bun.which("curl"))("the printed curl command works against a running server (skipped without curl)", async () => {
    const key = oneJson((await run(["keys", "create", "--partner", "Curl Test", "--mode", "live", "--scopes", "read", "--json"])).stdout);
    const token = oneJson((await run(["admin-token", "create", "--name", "curl-test", "--json"])).stdout).token as string;
    const port = freePort();
    const server = spawnHerald(["serve"], { ...env, PORT: String(port), HOST: "127.0.0.1", JOBS_ENABLED: "0", BOOTSTRAP_CREDENTIALS: "0" });
    try {
      await waitForHttp(`http://127.0.0.1:${port}/healthz`);
      const signed = oneJson(
        (await run(["sign", "--key", key.key_id, "--secret", key.secret, "GET", `http://127.0.0.1:${port}/api/partner/capabilities`, "--json"])).stdout,
      );
      const p = Bun.spawn(["bash", "-c", signed.curl], { stdout: "pipe", stderr: "pipe" });
      const [out, , code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
      expect(code).toBe(0);
      expect(JSON.parse(out)).toMatchObject({ success: true });

      const listed = await fetch(`http://127.0.0.1:${port}/admin/partners/keys`, { headers: { authorization: `Bearer ${token}` } });
      expect(listed.status).toBe(200);
      const text = await listed.text();
      expect(JSON.parse(text).keys.map((k: { key_id: string }) => k.key_id)).toContain(key.key_id);
      expect(text).not.toContain(key.secret);
    } finally {
      server.kill("SIGTERM");
      await server.exited;
    }
  });
});
