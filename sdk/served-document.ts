// The OpenAPI document exactly as Herald serves it (GET /api/openapi.json), from an app over a throwaway
// database with the default configuration: what `npm run sdk:generate` and the drift test both read.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildApp } from "../src/app";
import { openContext } from "../src/bootstrap";
import { loadConfig } from "../src/config";
import { createLogger } from "../src/log";
import type { OpenApiLike } from "./openapi-to-ts";

export async function servedOpenApiDocument(): Promise<OpenApiLike> {
  const dir = mkdtempSync(join(tmpdir(), "herald-sdk-openapi-"));
  const config = loadConfig({ NODE_ENV: "test", HERALD_DB_PATH: join(dir, "herald.db"), LOG_LEVEL: "silent", JOBS_ENABLED: "0" });
  const ctx = openContext(config, { log: createLogger("silent") });
  try {
    const res = await buildApp(ctx).handle(new Request("http://localhost/api/openapi.json"));
    if (res.status !== 200) throw new Error(`/api/openapi.json answered ${res.status}`);
    return (await res.json()) as OpenApiLike;
  } finally {
    ctx.requestLog.stop();
    void ctx.jobs.stop();
    await ctx.store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
