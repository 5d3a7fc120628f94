// `npm run sdk:generate`: rewrites src/client/api-types.ts from the served OpenAPI document. Run it after
// changing a partner route's schema; test/client/api-types.test.ts says when it is due.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { generateApiTypes } from "./openapi-to-ts";
import { servedOpenApiDocument } from "./served-document";

const out = join(import.meta.dir, "..", "src", "client", "api-types.ts");
const text = generateApiTypes(await servedOpenApiDocument());
writeFileSync(out, text);
console.log(`wrote ${out} (${text.split("\n").length} lines)`);
