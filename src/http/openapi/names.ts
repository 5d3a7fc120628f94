import type { TSchema } from "@sinclair/typebox";

/**
 * The keyword that names a schema for the OpenAPI document. A custom keyword, not `$id`: TypeBox's compiler
 * hoists every `$id` into a shared check function and Elysia resolves `$id`s as model references, so a `$id`
 * would change how bodies and responses are validated; an `x-` keyword is ignored by both validators and only
 * read by src/http/openapi/components.ts, which moves each named schema into `components.schemas` once and puts
 * a `$ref` everywhere it occurs.
 */
export const SCHEMA_NAME_KEY = "x-herald-schema";

/**
 * Names a resource schema where it is defined: `named("User", t.Object({ … }))`. The schema object itself is
 * returned (marked), so routes keep real typebox schemas that the HTTP core and Elysia validate with. Copies that
 * TypeBox makes (t.Optional, a nullable union) keep the name; spreading `.properties` into a new object does not,
 * which is what a variant with other fields should do.
 */
export function named<T extends TSchema>(name: string, schema: T): T {
  if (!/^[A-Z][A-Za-z0-9]*$/.test(name)) throw new Error(`schema name ${name}: use PascalCase letters and digits`);
  (schema as Record<string, unknown>)[SCHEMA_NAME_KEY] = name;
  return schema;
}
