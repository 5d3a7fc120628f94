// `npm run sdk:generate`: rewrites src/client/api-types.ts from the served OpenAPI document. Run it after
// changing a partner route's schema; test/client/api-types.test.ts says when it is due.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { SDK_GENERATING } from "../src/developers/sdk-artifact-macro";
import { generateApiTypes } from "./openapi-to-ts";

// A method in OPERATIONS whose operation api-types.ts lacks yet must not stop the document being read
// (src/developers/sdk-artifact-macro.ts). The macro sees the environment the process started with, so without the
// variable this script runs itself again with it; the app is imported only then.
if (process.env[SDK_GENERATING] !== "1") {
  const again = Bun.spawnSync([process.execPath, import.meta.path], { env: { ...process.env, [SDK_GENERATING]: "1" }, stdio: ["inherit", "inherit", "inherit"] });
  process.exit(again.exitCode ?? 1);
}
const { servedOpenApiDocument } = await import("./served-document");
const out = join(import.meta.dir, "..", "src", "client", "api-types.ts");
const text = generateApiTypes(await servedOpenApiDocument());
writeFileSync(out, text);
console.log(`wrote ${out} (${text.split("\n").length} lines)`);
