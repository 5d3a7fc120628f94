// Validates the served OpenAPI document with a real validator (swagger-parser), as CI does; with a path argument it
// also writes the served JSON document there (for Redocly's lint in .ci/run).
import SwaggerParser from "@apidevtools/swagger-parser";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeFileSync } from "node:fs";
import YAML from "yaml";
import { buildApp } from "../src/app";
import { closeContext, openContext } from "../src/bootstrap";
import { loadConfig } from "../src/config";
import { createLogger } from "../src/log";

const dir = mkdtempSync(join(tmpdir(), "herald-openapi-"));
const ctx = openContext(loadConfig({ HERALD_DB_PATH: join(dir, "herald.db"), LOG_LEVEL: "silent", JOBS_ENABLED: "0" }), { log: createLogger("silent") });
try {
  const app = buildApp(ctx);
  for (const path of ["/api/openapi.yaml", "/api/openapi-transparency.yaml"]) {
    const res = await app.handle(new Request(`http://localhost${path}`));
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}`);
    const doc = YAML.parse(await res.text());
    await SwaggerParser.validate(doc);
    console.log(`${path}: valid OpenAPI ${doc.openapi}, ${Object.keys(doc.paths).length} paths`);
  }
  const out = process.argv[2];
  if (out) writeFileSync(out, await (await app.handle(new Request("http://localhost/api/openapi.json"))).text());
} finally {
  await closeContext(ctx);
  rmSync(dir, { recursive: true, force: true });
}
