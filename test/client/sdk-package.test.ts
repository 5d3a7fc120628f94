/**
 * The published SDK end to end, as a partner gets it: `npm pack` (sdk/build.ts) makes the tarball, a running
 * `herald serve` (a real process on 127.0.0.1) serves the same bytes under its manifest, `npm install` puts it
 * in a scratch project, and a partner program run by NODE (and by Bun) signs a GET and mutations against the
 * server and verifies a real webhook delivery. The built files import nothing but node:crypto and each other,
 * and a TypeScript consumer type-checks against the published declarations under `tsc --strict`.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SCOPES } from "../../src/auth/scopes";
import { exitWithin, freePort, REPO_ROOT, spawnHerald, waitForHttp } from "../support/process";

// Real processes (tsc, npm, node, herald): seconds each on a loaded 2-core machine.
setDefaultTimeout(120_000);

const dir = mkdtempSync(join(tmpdir(), "herald-sdk-e2e-"));
const FIXTURES = join(import.meta.dir, "fixtures");
let herald: ReturnType<typeof spawnHerald> | null = null;
let base = "";
let key: { key_id: string; secret: string };
let tarball = "";
let scratch = "";

function sh(cmd: string[], cwd: string, env: Record<string, string> = {}) {
  const r = spawnSync(cmd[0]!, cmd.slice(1), { cwd, encoding: "utf8", env: { ...process.env, npm_config_update_notifier: "false", ...env } });
  if (r.status !== 0) throw new Error(`${cmd.join(" ")} exited ${r.status}: ${r.stderr}\n${r.stdout}`);
  return r.stdout;
}

beforeAll(async () => {
  // 1. npm pack, through the same script `npm run build:sdk` runs, into a directory of this test's own.
  sh([process.execPath, join(REPO_ROOT, "sdk", "build.ts"), "--out", join(dir, "pack")], REPO_ROOT);
  const stamp = JSON.parse(readFileSync(join(dir, "pack", "sdk-build.json"), "utf8")) as { file: string };
  tarball = join(dir, "pack", stamp.file);

  // 2. A live key through the CLI, then the server, over one database.
  const port = freePort();
  base = `http://127.0.0.1:${port}`;
  const env = {
    NODE_ENV: "test",
    HOST: "127.0.0.1",
    PORT: String(port),
    HERALD_DB_PATH: join(dir, "herald.db"),
    PUBLIC_BASE_URL: base,
    LOG_LEVEL: "warn",
    JOBS_ENABLED: "1",
    WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
    BOOTSTRAP_CREDENTIALS: "0",
  };
  const cli = spawnHerald(["keys", "create", "--partner", "SdkCo", "--mode", "live", "--scopes", SCOPES.join(","), "--json"], env);
  const [out, err, code] = await Promise.all([new Response(cli.stdout).text(), new Response(cli.stderr).text(), cli.exited]);
  if (code !== 0) throw new Error(`keys create exited ${code}: ${err}`);
  key = JSON.parse(out);
  herald = spawnHerald(["serve"], env);
  await waitForHttp(`${base}/readyz`, 30_000);

  // 3. A scratch project with the tarball installed (offline: the package has no dependencies).
  scratch = join(dir, "scratch");
  sh(["mkdir", "-p", scratch], dir);
  writeFileSync(join(scratch, "package.json"), JSON.stringify({ name: "scratch", private: true, type: "module" }));
  sh(["npm", "install", tarball, "--offline", "--no-audit", "--no-fund", "--ignore-scripts"], scratch);
});

afterAll(async () => {
  if (herald) {
    herald.kill("SIGTERM");
    await exitWithin(herald, 30_000);
  }
  rmSync(dir, { recursive: true, force: true });
});

describe("the tarball", () => {
  test("is what the server's manifest describes, byte for byte", async () => {
    const manifest = (await (await fetch(`${base}/developers/sdk-manifest.json`)).json()) as Record<string, any>;
    const bytes = readFileSync(tarball);
    expect(manifest).toMatchObject({ success: true, name: "@herald/client", api_version: "v1", module_format: "esm", dependencies: 0 });
    expect(manifest.download_path).toBe(`/developers/sdk/${manifest.file}`);
    const served = new Uint8Array(await (await fetch(base + manifest.download_path)).arrayBuffer());
    const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
    expect(sha(served)).toBe(manifest.sha256);
    // The running server serves the package of the current sources: packing them again gives the same bytes.
    expect(sha(bytes)).toBe(manifest.sha256);
    expect(manifest.integrity).toBe(`sha512-${createHash("sha512").update(served).digest("base64")}`);
  });

  test("holds ESM + .d.ts, no dependencies, and imports nothing but node:crypto and its own files", () => {
    const installed = join(scratch, "node_modules", "@herald", "client");
    const pkg = JSON.parse(readFileSync(join(installed, "package.json"), "utf8"));
    expect(pkg).toMatchObject({ name: "@herald/client", type: "module", exports: { ".": { types: "./dist/index.d.ts", import: "./dist/index.js" } } });
    expect(pkg.dependencies).toBeUndefined();
    const files = readdirSync(join(installed, "dist")).sort();
    expect(files).toContain("index.js");
    expect(files).toContain("index.d.ts");
    expect(files.every((f) => f.endsWith(".js") || f.endsWith(".d.ts"))).toBe(true);
    const specifiers = new Set<string>();
    for (const f of files) {
      const text = readFileSync(join(installed, "dist", f), "utf8");
      for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)["']([^"']+)["']/g)) specifiers.add(m[1]!);
      expect(text).not.toContain("reference types=");
    }
    for (const s of specifiers) {
      if (s.startsWith("./")) expect(files).toContain(s.slice(2));
      else expect(s).toBe("node:crypto");
    }
    expect(specifiers.has("node:crypto")).toBe(true);
  });

  test("type-checks a strict TypeScript consumer under Node's ESM resolution (typed inputs and outputs)", () => {
    copyFileSync(join(FIXTURES, "sdk-consumer-types.ts.txt"), join(scratch, "consumer.ts"));
    const tsconfig = {
      compilerOptions: { strict: true, noEmit: true, target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", lib: ["ES2022", "DOM"], types: [] },
      files: ["consumer.ts"],
    };
    writeFileSync(join(scratch, "tsconfig.json"), JSON.stringify(tsconfig));
    const r = spawnSync(join(REPO_ROOT, "node_modules", ".bin", "tsc"), ["-p", scratch], { cwd: scratch, encoding: "utf8" });
    expect(r.stdout + r.stderr).toBe("");
    expect(r.status).toBe(0);
  });
});

describe("a partner program using the installed package", () => {
  const runWith = (runtime: string[], run: string) => {
    copyFileSync(join(FIXTURES, "sdk-consumer.mjs"), join(scratch, "main.mjs"));
    const out = sh([...runtime, "main.mjs"], scratch, { HERALD_URL: base, KEY_ID: key.key_id, SECRET: key.secret, RUN: run });
    return JSON.parse(out.trim().split("\n").pop()!) as Record<string, any>;
  };

  const expectations = (r: Record<string, any>) => {
    expect(r.error).toBeUndefined();
    expect(r.capabilities).toBe(true);
    expect(r.credit_balance).toBe(12.5);
    expect(r.balance).toBe(12.5);
    expect(r.missing_user).toBe("404 not_found");
    expect(r.delivered).toBe(true);
    expect(r.verified_scheme).toBe("standard-webhooks");
    expect(r.verified_event_id).toBe(r.queued_event_id);
    expect(r.x_webhook_scheme).toBe("x-webhook-signature#1");
    expect(r.standard_only).toBe(true);
    expect(r.tampered).toBe(false);
  };

  test("under Node: signed GET, signed mutations, an API error, and a verified webhook", () => {
    const node = spawnSync("node", ["--version"], { encoding: "utf8" });
    expect(Number(/^v(\d+)/.exec(node.stdout)?.[1])).toBeGreaterThanOrEqual(20);
    const r = runWith(["node"], "node");
    expect(r.runtime).toBe("node");
    expect(r.fetched_external_id).toBe("sdk-node");
    expectations(r);
  });

  test("under Bun: the same program", () => {
    const r = runWith([process.execPath], "bun");
    expect(r.runtime).toBe("bun");
    expect(r.fetched_external_id).toBe("sdk-bun");
    expectations(r);
  });
});
