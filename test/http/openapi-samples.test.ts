import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import type { TSchema } from "@sinclair/typebox";
import { EXAMPLE_BODIES, exampleKey, sampleBody } from "../../src/http/openapi/examples";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { createKey } from "../support/partner";
import { BUN, MAIN, REPO_ROOT } from "../support/process";
import { reportOptional } from "../support/skipped";

// The code samples of the API reference (x-codeSamples, src/http/openapi/samples.ts): present on every
// operation, with bodies the routes accept, a curl line shaped exactly like `herald sign`'s output, and a Python
// signer that reproduces docs/design.md §3's vectors and signs real requests that a real server accepts.

const SIGNER = join(REPO_ROOT, "docs", "python", "herald_sign.py");
const PYTHON = Bun.which("python3");
if (!PYTHON) reportOptional("test/http/openapi-samples.test.ts", "the Python signer (docs/python/herald_sign.py)", "python3 is not on PATH");

let h: TestApp | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await h?.close();
  h = undefined;
  while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true });
});

async function documentOf(app: TestApp) {
  return (await app.json("/api/openapi.json")).body as { info: { description: string }; paths: Record<string, Record<string, any>> };
}

const samplesOf = (op: any) => Object.fromEntries((op["x-codeSamples"] as Array<{ lang: string; label: string; source: string }>).map((s) => [s.lang, s]));

describe("x-codeSamples", () => {
  test("every operation has curl, TypeScript and Python; signed ones use herald sign, HeraldClient and the signer", async () => {
    h = await openTestApp();
    const doc = await documentOf(h);
    let signed = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const s = samplesOf(op);
        expect(Object.keys(s).sort(), `${method} ${path}`).toEqual(["python", "shell", "typescript"]);
        const isSigned = (op.security ?? []).some((x: Record<string, unknown>) => "PartnerSignature" in x);
        if (!isSigned) {
          expect(s.shell!.source, `${method} ${path}`).toStartWith(`curl -sS -X ${method.toUpperCase()} '`);
          continue;
        }
        signed++;
        expect(s.shell!.source).toContain(`herald sign --key "$HERALD_KEY_ID" --secret "$HERALD_SECRET" \\\n  ${method.toUpperCase()} 'http://localhost:3000`);
        expect(s.typescript!.source).toContain('import { HeraldApiError, HeraldClient } from "@herald/client";');
        expect(s.python!.source).toContain("from herald_sign import herald");
      }
    }
    expect(signed).toBeGreaterThan(40);
    // The signer the Python samples import is shown once, in the document's introduction, verbatim.
    expect(doc.info.description).toContain(readFileSync(SIGNER, "utf8").trimEnd());
  });

  test("every sample body is accepted by its route's body schema", async () => {
    h = await openTestApp();
    const doc = await documentOf(h);
    const checked: string[] = [];
    for (const route of h.app.routes as Array<{ method: string; path: string; hooks?: { body?: TSchema } }>) {
      if (!route.hooks?.body) continue;
      const path = route.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
      const op = doc.paths[path]?.[route.method.toLowerCase()];
      if (!op) continue;
      // The sign-in and console forms take a form body, not JSON (docs/operations.md, "Operator sign-in and pages"):
      // the same example machinery, every value a string (test/http/openapi-form-samples.test.ts posts one).
      const form = op.requestBody.content["application/x-www-form-urlencoded"];
      const ts = samplesOf(op).typescript!.source;
      const example = EXAMPLE_BODIES[exampleKey(route.method, path)] ?? sampleBody((form ?? op.requestBody.content["application/json"]).schema);
      const body = form ? Object.fromEntries(Object.entries(example as object).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)])) : example;
      const check = TypeCompiler.Compile(route.hooks.body);
      expect(check.Check(body) ? null : [...check.Errors(body)].map((e) => `${e.path} ${e.message}`), `${route.method} ${path}`).toBeNull();
      // The TypeScript sample sends that body.
      if (Object.keys(body as object).length) expect(ts, `${route.method} ${path}`).toContain(Object.keys(body as object)[0]!);
      checked.push(`${route.method} ${path}`);
    }
    expect(checked.length).toBeGreaterThan(30);
    // Every curated example belongs to a route that exists.
    const keys = new Set(checked.map((k) => exampleKey(k.split(" ")[0]!, k.split(" ")[1]!)));
    expect(Object.keys(EXAMPLE_BODIES).filter((k) => !keys.has(k))).toEqual([]);
  });

  test("the curl sample's printed line has exactly the shape `herald sign` prints", async () => {
    h = await openTestApp();
    const doc = await documentOf(h);
    const shell = samplesOf(doc.paths["/api/salutes/credit"]!.post).shell!.source;
    // The sample wraps the printed line: "# curl …" then "#   -H …" lines.
    const lines = shell.split("\n");
    const printed = lines
      .slice(lines.findIndex((l) => l.startsWith("# curl ")))
      .map((l) => l.replace(/^#\s+/, ""))
      .join(" ");
    const body = JSON.stringify(EXAMPLE_BODIES["POST /api/salutes/credit"]);
    const cli = Bun.spawnSync(
      [BUN, MAIN, "sign", "--key", "hk_live_KEY_ID", "--secret", "hsk_test_secret_0123456789abcdef", "POST", "http://localhost:3000/api/salutes/credit", body],
      { stdout: "pipe", stderr: "pipe" },
    );
    expect(cli.exitCode, cli.stderr.toString()).toBe(0);
    // Time, nonce, key and signature differ from run to run; everything else must be the same.
    const mask = (line: string) => line.trim().replace(/(X-Partner-Timestamp|X-Partner-Signature|X-Partner-Nonce|Idempotency-Key): [^']+/g, "$1: …");
    expect(mask(printed)).toBe(mask(cli.stdout.toString()));
  });
});

describe.skipIf(!PYTHON)("the Python signer (docs/python/herald_sign.py)", () => {
  test("reproduces the docs/design.md §3 test vectors", () => {
    const script = [
      "import sys",
      `sys.path.insert(0, ${JSON.stringify(join(REPO_ROOT, "docs", "python"))})`,
      "from herald_sign import sign",
      `print(sign("hsk_test_secret_0123456789abcdef", "POST", "/api/salutes/credit", 1767225600, "9f86d081884c7d659a2feaa0c55ad015", b'{"user_id":"42","amount":12.5,"reason":"quest","source":"partner-app"}'))`,
      `print(sign("hsk_test_secret_0123456789abcdef", "GET", "/api/salutes/balance?user_id=42", 1767225600))`,
    ].join("\n");
    const p = Bun.spawnSync([PYTHON!, "-c", script], { stdout: "pipe", stderr: "pipe" });
    expect(p.exitCode, p.stderr.toString()).toBe(0);
    expect(p.stdout.toString().trim().split("\n")).toEqual([
      "36cd6fd54abb4f70c1226b2e3bb58415b950ca152f9d6da0e1f575793266947d",
      "95695bf61005c23b37fd3e3af288b164df2355cbeb6b3d975d5308608f6687e4",
    ]);
  });

  test("docs/api-reference.md shows the same signer, verbatim", () => {
    expect(readFileSync(join(REPO_ROOT, "docs", "api-reference.md"), "utf8")).toContain(readFileSync(SIGNER, "utf8").trimEnd());
  });

  test("the Python samples of a signed read and a signed mutation, run as printed, are accepted by a real server", async () => {
    // The server's clock is now: the signer signs with the real time.
    h = await openTestApp({ clock: new FakeClock(new Date()) });
    const key = await createKey(h, { mode: "live" });
    const server = h.app.listen({ hostname: "127.0.0.1", port: 0 });
    const base = `http://127.0.0.1:${server.server!.port}`;
    const dir = mkdtempSync(join(tmpdir(), "herald-python-sample-"));
    dirs.push(dir);
    try {
      const doc = await documentOf(h);
      const env = { ...process.env, PYTHONPATH: join(REPO_ROOT, "docs", "python"), HERALD_KEY_ID: key.keyId, HERALD_SECRET: key.secret };
      // Spawned asynchronously: the server answers from this process's event loop.
      const runSample = async (path: string, method: string) => {
        const source = samplesOf(doc.paths[path]![method]).python!.source.replaceAll("http://localhost:3000", base);
        writeFileSync(join(dir, "sample.py"), source);
        const p = Bun.spawn([PYTHON!, join(dir, "sample.py")], { env, stdout: "pipe", stderr: "pipe" });
        const [code, out, err] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
        return { code, out, err };
      };
      const created = await runSample("/api/partner/users", "post");
      expect(created.err).toBe("");
      expect(created.code).toBe(0);
      expect(created.out).toContain("'external_id': 'player-1001'");
      const caps = await runSample("/api/partner/capabilities", "get");
      expect(caps.err).toBe("");
      expect(caps.out).toContain(`'key_id': '${key.keyId}'`);
    } finally {
      await server.stop(true);
    }
  }, 60_000);
});

test.skipIf(!existsSync(join(REPO_ROOT, "src", "client", "index.ts")))(
  "the TypeScript sample of a signed route runs as printed against a real server",
  async () => {
    h = await openTestApp({ clock: new FakeClock(new Date()) });
    const key = await createKey(h, { mode: "live" });
    const server = h.app.listen({ hostname: "127.0.0.1", port: 0 });
    const dir = mkdtempSync(join(tmpdir(), "herald-ts-sample-"));
    dirs.push(dir);
    try {
      const doc = await documentOf(h);
      // The published package's name is resolved to this repository's client (what the SDK tarball ships).
      const source = samplesOf(doc.paths["/api/partner/users"]!.post)
        .typescript!.source.replaceAll("http://localhost:3000", `http://127.0.0.1:${server.server!.port}`)
        .replace('"@herald/client"', JSON.stringify(join(REPO_ROOT, "src", "client", "index.ts")));
      writeFileSync(join(dir, "sample.ts"), source);
      const p = Bun.spawn([BUN, join(dir, "sample.ts")], {
        env: { ...process.env, HERALD_KEY_ID: key.keyId, HERALD_SECRET: key.secret },
        stdout: "pipe",
        stderr: "pipe",
      });
      const [code, out, err] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
      expect(err).toBe("");
      expect(code).toBe(0);
      expect(out).toContain('external_id: "player-1001"');
    } finally {
      await server.stop(true);
    }
  },
  60_000,
);

const CURL = Bun.which("curl");
if (!CURL) reportOptional("test/http/openapi-samples.test.ts", "the curl samples run as printed", "curl is not on PATH");
test.skipIf(!CURL)(
  "the curl samples of a signed mutation and a signed read, run as printed with `herald` on PATH, are accepted by a real server",
  async () => {
    h = await openTestApp({ clock: new FakeClock(new Date()) });
    const key = await createKey(h, { mode: "live" });
    const server = h.app.listen({ hostname: "127.0.0.1", port: 0 });
    const base = `http://127.0.0.1:${server.server!.port}`;
    const dir = mkdtempSync(join(tmpdir(), "herald-curl-sample-"));
    dirs.push(dir);
    // `herald` as a partner has it: the CLI (here run from source).
    writeFileSync(join(dir, "herald"), `#!/bin/sh\nexec ${JSON.stringify(BUN)} ${JSON.stringify(MAIN)} "$@"\n`, { mode: 0o755 });
    try {
      const doc = await documentOf(h);
      const runSample = async (path: string, method: string) => {
        writeFileSync(join(dir, "sample.sh"), samplesOf(doc.paths[path]![method]).shell!.source.replaceAll("http://localhost:3000", base));
        const env = { ...process.env, PATH: `${dir}:${process.env.PATH}`, HERALD_KEY_ID: key.keyId, HERALD_SECRET: key.secret };
        const p = Bun.spawn(["bash", join(dir, "sample.sh")], { env, stdout: "pipe", stderr: "pipe" });
        const [code, out, err] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
        return { code, out, err };
      };
      const created = await runSample("/api/partner/users", "post");
      expect(created.err).toBe("");
      expect(created.code).toBe(0);
      expect(JSON.parse(created.out).user.external_id).toBe("player-1001");
      const caps = await runSample("/api/partner/capabilities", "get");
      expect(caps.code).toBe(0);
      expect(JSON.parse(caps.out).key_id).toBe(key.keyId);
    } finally {
      await server.stop(true);
    }
  },
  60_000,
);
