// GET /developers/sdk-manifest.json and GET /developers/sdk/{file}: the manifest describes exactly the bytes
// served at its download path (sha256, sha512 integrity, size), the tarball is an npm package of that name and
// version, conditional GET works, other names are a catalog 404, and both routes are in the OpenAPI document.
import { afterEach, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openTestApp, type TestApp } from "../support/app";

let h: TestApp;
afterEach(() => h?.close());

async function manifest() {
  const r = await h.json("/developers/sdk-manifest.json");
  expect(r.status).toBe(200);
  return r.body as Record<string, any>;
}

describe("SDK manifest", () => {
  test("names the package, its API version and a download whose bytes have the sha256, integrity and size it states", async () => {
    h = await openTestApp({ env: { PUBLIC_BASE_URL: "https://herald.example.com" } });
    const m = await manifest();
    const pkg = JSON.parse(readFileSync(join(import.meta.dir, "..", "..", "sdk", "package.json"), "utf8"));
    expect(m).toMatchObject({
      success: true,
      name: pkg.name,
      version: pkg.version,
      api_version: "v1",
      module_format: "esm",
      type_declarations: true,
      dependencies: 0,
    });
    expect(m.file).toBe(`herald-client-${pkg.version}.tgz`);
    expect(m.download_path).toBe(`/developers/sdk/${m.file}`);
    expect(m.download_url).toBe(`https://herald.example.com${m.download_path}`);
    expect(m.install_command).toBe(`npm install ${m.download_url}`);
    expect(Number.isNaN(Date.parse(m.generated_at))).toBe(false);

    const res = await h.request(m.download_path);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/gzip");
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect(bytes.length).toBe(m.size_bytes);
    expect(createHash("sha256").update(bytes).digest("hex")).toBe(m.sha256);
    expect(m.integrity).toBe(`sha512-${createHash("sha512").update(bytes).digest("base64")}`);
    expect(res.headers.get("etag")).toBe(`"${m.sha256}"`);
  });

  test("the download is an npm tarball (read by tar) of that package, ESM with type declarations", async () => {
    h = await openTestApp();
    const m = await manifest();
    const dir = mkdtempSync(join(tmpdir(), "herald-sdk-tar-"));
    try {
      writeFileSync(join(dir, m.file), new Uint8Array(await (await h.request(m.download_path)).arrayBuffer()));
      const listed = spawnSync("tar", ["tzf", m.file], { cwd: dir, encoding: "utf8" });
      expect(listed.status).toBe(0);
      const files = listed.stdout.trim().split("\n");
      for (const f of ["package/package.json", "package/README.md", "package/dist/index.js", "package/dist/index.d.ts", "package/dist/api-types.d.ts"])
        expect(files).toContain(f);
      expect(files.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))).toEqual([]);
      const inner = JSON.parse(spawnSync("tar", ["xzOf", m.file, "package/package.json"], { cwd: dir, encoding: "utf8" }).stdout);
      expect(inner).toMatchObject({ name: m.name, version: m.version, type: "module" });
      expect(inner.dependencies).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("If-None-Match with the ETag answers 304 without a body; other file names are a JSON 404", async () => {
    h = await openTestApp();
    const m = await manifest();
    const etag = `"${m.sha256}"`;
    const again = await h.request(m.download_path, { headers: { "if-none-match": `"other", ${etag}` } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
    // The one If-None-Match rule of every validator-backed route: compared weakly, and `*` matches.
    for (const inm of [`W/${etag}`, "*"]) expect((await h.request(m.download_path, { headers: { "if-none-match": inm } })).status).toBe(304);
    for (const name of ["herald-client-0.0.1.tgz", "..%2Fpackage.json", "x"]) {
      const r = await h.json(`/developers/sdk/${name}`);
      expect(r.status).toBe(404);
      expect(r.body).toMatchObject({ success: false, error: "not_found" });
    }
  });

  test("both routes are in the OpenAPI document, the download's file parameter bounded", async () => {
    h = await openTestApp();
    const doc = (await h.json("/api/openapi.json")).body as any;
    expect(doc.paths["/developers/sdk-manifest.json"]?.get).toBeDefined();
    const download = doc.paths["/developers/sdk/{file}"]?.get;
    expect(download).toBeDefined();
    const file = download.parameters.find((p: { name: string }) => p.name === "file");
    expect(file).toMatchObject({ in: "path", required: true, schema: { type: "string", maxLength: 128 } });
    expect(Object.keys(download.responses["200"].content)).toEqual(["application/gzip"]);
  });
});
