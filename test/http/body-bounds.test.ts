// Every request body is bounded field by field, not only by MAX_BODY_BYTES: each array declares maxItems and each
// free-text string maxLength (a string with an enum, const, format or pattern is bounded by those). Walks the
// request bodies of /api/openapi.json, so a route added without bounds fails here.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";

type Schema = Record<string, unknown> & {
  $ref?: string;
  type?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
};

let h: TestApp;
beforeAll(async () => {
  h = await openTestApp();
});
afterAll(async () => {
  await h?.close();
});

describe("request bodies are bounded field by field", () => {
  test("every array has maxItems and every free-text string maxLength", async () => {
    const doc = (await (await h.request("/api/openapi.json")).json()) as {
      paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema: Schema }> } }>>;
      components: { schemas: Record<string, Schema> };
    };
    const deref = (s: Schema): Schema => (s.$ref ? deref(doc.components.schemas[s.$ref.split("/").pop()!]!) : s);
    const unbounded: string[] = [];
    const walk = (raw: Schema | undefined, at: string, depth: number) => {
      if (!raw || depth > 12) return;
      const s = deref(raw);
      if (s.type === "array" && s.maxItems === undefined) unbounded.push(`${at} (array without maxItems)`);
      const boundedText = ["maxLength", "enum", "const", "format", "pattern"].some((k) => s[k] !== undefined);
      if (s.type === "string" && !boundedText) unbounded.push(`${at} (string without maxLength)`);
      for (const [name, p] of Object.entries(s.properties ?? {})) walk(p, `${at}.${name}`, depth + 1);
      walk(s.items, `${at}[]`, depth + 1);
      for (const b of [...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])]) walk(b, at, depth + 1);
    };
    let bodies = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of ["post", "put", "patch", "delete"]) {
        for (const [type, media] of Object.entries(item[method]?.requestBody?.content ?? {})) {
          bodies++;
          walk(media.schema, `${method.toUpperCase()} ${path} ${type} body`, 0);
        }
      }
    }
    expect(bodies).toBeGreaterThan(50);
    expect(unbounded).toEqual([]);
  });
});
