// The SDK's typed methods against the OpenAPI document Herald serves: src/client/api-types.ts is exactly what
// the generator makes of the served document (so no route changed its schema without the SDK following), and
// OPERATIONS names every signed partner operation of the document and nothing else.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { generateApiTypes, partnerOperationKeys } from "../../sdk/openapi-to-ts";
import { servedOpenApiDocument } from "../../sdk/served-document";
import { OPERATIONS, resolveOperation } from "../../src/client";

const doc = await servedOpenApiDocument();

describe("generated from the served document", () => {
  test("src/client/api-types.ts is up to date (else: npm run sdk:generate)", () => {
    const checkedIn = readFileSync(join(import.meta.dir, "..", "..", "src", "client", "api-types.ts"), "utf8").split("\n");
    const fresh = generateApiTypes(doc).split("\n");
    const at = Math.max(checkedIn.length, fresh.length);
    const first = Array.from({ length: at }, (_, i) => i).find((i) => checkedIn[i] !== fresh[i]);
    const verdict =
      first === undefined
        ? "up to date"
        : `line ${first + 1} is ${JSON.stringify(checkedIn[first])}, the document gives ${JSON.stringify(fresh[first])}: run npm run sdk:generate`;
    expect(verdict).toBe("up to date");
  });

  test("every client method's method and path is an operation of the document, and every partner operation has a method", () => {
    const documented = partnerOperationKeys(doc);
    for (const op of Object.values(OPERATIONS)) {
      const [method, path] = op.split(" ") as [string, string];
      expect(doc.paths[path]?.[method.toLowerCase()]).toBeDefined();
    }
    expect([...new Set<string>(Object.values(OPERATIONS))].sort()).toEqual(documented);
    expect(Object.values(OPERATIONS)).toHaveLength(documented.length);
  });

  test("the generator gives named types for component schemas and follows their references", () => {
    const text = generateApiTypes({
      paths: {
        "/api/partner/things/{thing_id}": {
          get: {
            summary: "A thing",
            parameters: [{ name: "thing_id", in: "path", required: true, schema: { type: "integer" } }],
            responses: { "200": { content: { "application/json": { schema: { $ref: "#/components/schemas/Thing" } } } } },
          },
        },
        "/api/public/other": { get: { responses: {} } },
      },
      components: {
        schemas: {
          Thing: {
            type: "object",
            required: ["id", "owner"],
            properties: { id: { type: "integer" }, owner: { $ref: "#/components/schemas/Owner" }, tag: { type: ["string", "null"] } },
          },
          Owner: { type: "object", required: ["kind"], properties: { kind: { enum: ["a", "b"] } } },
          Unused: { type: "string" },
        },
      },
    });
    expect(text).toContain("export type Thing = {");
    expect(text).toContain("export type Owner = {");
    expect(text).toContain('kind: "a" | "b";');
    expect(text).toContain("tag?: string | null;");
    expect(text).toContain("response: Thing;");
    expect(text).toContain("thing_id: number;");
    expect(text).not.toContain("Unused");
    expect(text).not.toContain("/api/public/other");
  });
});

describe("resolveOperation", () => {
  test("fills path parameters, percent-encoded as one segment each", () => {
    expect(resolveOperation("GET /api/partner/users/{user_id}", { path: { user_id: "a/b c" } })).toEqual({
      method: "GET",
      path: "/api/partner/users/a%2Fb%20c",
    });
    expect(resolveOperation("POST /api/partner/webhooks/{webhook_id}/test", { path: { webhook_id: 7 } }).path).toBe("/api/partner/webhooks/7/test");
  });

  test("a missing path parameter is refused before anything is sent", () => {
    expect(() => resolveOperation("GET /api/partner/users/{user_id}", {})).toThrow("path parameter user_id is required");
  });
});
