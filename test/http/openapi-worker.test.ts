// The API documents built in a worker (src/http/openapi/documents.ts, src/workers/openapi-worker.ts): the same
// bytes as the serving thread builds, what `herald serve` answers with, the fallback when the worker cannot build,
// and nothing on disk.
import { afterAll, afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config";
import type { Config } from "../../src/config";
import { createLogger, type Logger } from "../../src/log";
import { type DocumentName, OpenApiDocuments, openApiDocumentEtag, startOpenApiBuildInWorker } from "../../src/http/openapi/documents";
import { AUDIENCES } from "../../src/http/openapi/audiences";
import { openTestApp, type TestApp } from "../support/app";
import { exitWithin, freePort, spawnHerald, waitForHttp } from "../support/process";

// A worker loads the whole app before it builds: seconds on a loaded machine; bun's default is 5 s per test.
setDefaultTimeout(120_000);

let h: TestApp | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});
const dir = mkdtempSync(join(tmpdir(), "herald-openapi-worker-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PATHS: Record<DocumentName, string> = {
  json: "/api/openapi.json",
  yaml: "/api/openapi.yaml",
  transparencyYaml: "/api/openapi-transparency.yaml",
};

function capturingLog(): { log: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  return { log: createLogger("info", (line) => lines.push(JSON.parse(line))), lines };
}
const builtLines = (lines: Array<Record<string, unknown>>) => lines.filter((l) => l.msg === "openapi documents built");
const bytes = async (body: Uint8Array | Blob) => new Uint8Array(body instanceof Blob ? await body.arrayBuffer() : body);
const neverOnTheLoop = () => {
  throw new Error("built on the event loop");
};

test("the worker's documents are byte for byte the ones the serving thread builds over the same configuration", async () => {
  h = await openTestApp();
  const { log, lines } = capturingLog();
  const docs = new OpenApiDocuments(neverOnTheLoop, { config: h.ctx.config, log });
  docs.startInWorker();
  for (const [name, path] of Object.entries(PATHS) as Array<[DocumentName, string]>) {
    const served = await h.request(path);
    expect(served.status).toBe(200);
    const fromWorker = await docs.document(name);
    expect(await bytes(fromWorker.body)).toEqual(new Uint8Array(await served.arrayBuffer()));
    expect(fromWorker.etag).toBe(served.headers.get("etag")!);
    expect(fromWorker.headers["content-type"]).toBe(served.headers.get("content-type")!);
  }
  // The reference's documents, one per audience, likewise.
  for (const a of AUDIENCES) {
    const served = await h.request(`/api/openapi/${a.slug}.json`);
    expect(served.status).toBe(200);
    const fromWorker = await docs.audience(a.slug);
    expect(await bytes(fromWorker.body)).toEqual(new Uint8Array(await served.arrayBuffer()));
    expect(fromWorker.etag).toBe(served.headers.get("etag")!);
  }
  expect(builtLines(lines)).toEqual([expect.objectContaining({ where: "worker", build_ms: expect.any(Number), json_bytes: expect.any(Number) })]);
});

test("started the way serve starts it: /api/openapi.json and the preflight ETag come from the worker, never built on the loop", async () => {
  const { log, lines } = capturingLog();
  h = await openTestApp({ log });
  startOpenApiBuildInWorker(h.ctx);
  // Asked for at once, before the worker answered: the request awaits the build.
  const [res, etag] = await Promise.all([h.request("/api/openapi.json"), openApiDocumentEtag(h.ctx)]);
  expect(res.status).toBe(200);
  expect(((await res.json()) as { openapi: string }).openapi).toMatch(/^3\.1\./);
  expect(etag).toBe(res.headers.get("etag")!);
  expect((await h.request("/api/openapi.yaml")).status).toBe(200);
  expect((await h.request("/api/openapi/partners.json")).status).toBe(200);
  expect(builtLines(lines).map((l) => l.where)).toEqual(["worker"]);
  // A second start changes nothing: the documents are built once.
  startOpenApiBuildInWorker(h.ctx);
  expect((await h.request("/api/openapi.json", { headers: { "if-none-match": etag! } })).status).toBe(304);
  expect(builtLines(lines)).toHaveLength(1);
});

test("a worker that cannot build is ended with a warning, and the documents are built on the loop instead", async () => {
  h = await openTestApp();
  const expected = new Uint8Array(await (await h.request("/api/openapi.json")).arrayBuffer());
  const { log, lines } = capturingLog();
  let builds = 0;
  const build = () => {
    builds++;
    return JSON.parse(new TextDecoder().decode(expected));
  };
  // A function does not survive structured cloning: the configuration cannot be posted to the worker.
  const unclonable = { ...h.ctx.config, hook: () => 1 } as unknown as Config;
  const docs = new OpenApiDocuments(build, { config: unclonable, log });
  docs.startInWorker();
  expect(await bytes((await docs.document("json")).body)).toEqual(expected);
  expect(builds).toBe(1);
  expect(lines.find((l) => l.level === "warn")?.msg).toContain("the worker build failed");
  expect(builtLines(lines).map((l) => l.where)).toEqual(["thread"]);

  // A worker that does not answer in time is given up the same way.
  const slow = capturingLog();
  const late = new OpenApiDocuments(build, { config: h.ctx.config, log: slow.log });
  late.startInWorker(1);
  expect(await bytes((await late.document("json")).body)).toEqual(expected);
  expect(slow.lines.find((l) => l.level === "warn")?.error).toContain("did not answer within 1 ms");
});

test("the worker writes nothing to disk: no database file, no development master key, whatever HERALD_DB_PATH says", async () => {
  const where = join(dir, "never-made");
  const config = loadConfig({
    NODE_ENV: "development",
    HERALD_DB_PATH: join(where, "herald.db"),
    LOG_LEVEL: "silent",
    PUBLIC_BASE_URL: "http://localhost:3000",
  });
  const { log, lines } = capturingLog();
  const docs = new OpenApiDocuments(neverOnTheLoop, { config, log });
  docs.startInWorker();
  expect((await docs.document("transparencyYaml")).size).toBeGreaterThan(1000);
  expect(builtLines(lines).map((l) => l.where)).toEqual(["worker"]);
  expect(existsSync(where)).toBe(false);
});

test("`herald serve` builds the documents in its worker from start: /api/openapi.json answers, the log says where", async () => {
  const port = freePort();
  const proc = spawnHerald(["serve"], {
    NODE_ENV: "test",
    PORT: String(port),
    HOST: "127.0.0.1",
    HERALD_DB_PATH: join(dir, "serve", "herald.db"),
    LOG_LEVEL: "info",
    JOBS_ENABLED: "0",
    BOOTSTRAP_CREDENTIALS: "0",
  });
  let stdout = "";
  const collected = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of proc.stdout) stdout += decoder.decode(chunk, { stream: true });
  })();
  try {
    await waitForHttp(`http://127.0.0.1:${port}/healthz`, 60_000);
    const res = await fetch(`http://127.0.0.1:${port}/api/openapi.json`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { info: { title: string } }).info.title).toBe("Herald API");
    // The line is written with the next batch (src/log.ts): wait for it, bounded.
    for (let i = 0; i < 100 && !stdout.includes('"openapi documents built"'); i++) await Bun.sleep(20);
    const built = stdout
      .split("\n")
      .filter((l) => l.includes('"openapi documents built"'))
      .map((l) => JSON.parse(l));
    expect(built).toEqual([expect.objectContaining({ where: "worker" })]);
  } finally {
    proc.kill("SIGINT");
    await exitWithin(proc, 30_000);
    await collected;
  }
});
