import { createHash } from "node:crypto";
import type { TSchema } from "elysia";
import { ErrorBody } from "../../http/envelope";
import { SCHEMA_NAME_KEY } from "../../http/openapi/names";
import { jsonShapes, mapSchema } from "../../http/openapi/components";
import { ChainModel } from "../../chain/model";
import { dottedColumns } from "../../chain/service";
import { AuditResponses, ExportRowSchema } from "./audit-model";
import { EXPORT_COLUMNS } from "./exports";
import { ALERTS_CSV_COLUMNS, COMPARE_CSV_COLUMNS, DIFF_CSV_COLUMNS } from "./csv";
import { TransparencyModel } from "../model";

// schema-registry.json: a JSON Schema (draft 2020-12) for every transparency answer, made from the same typebox
// schemas the routes are documented with. CSV answers are described by the records csv-parse gives with
// `columns: true` (every cell a string) and by their column order. REGISTRY_VERSION changes when a schema
// changes incompatibly (fields removed or retyped); each entry's sha256 changes with any change at all.

export const REGISTRY_VERSION = "1.0.0";
export const DIALECT = "https://json-schema.org/draft/2020-12/schema";
const BASE = "/transparency/audit-anomalies/";

/**
 * A typebox schema as plain JSON Schema: symbols dropped by the JSON round trip, our naming marker removed, and
 * Elysia's coercing numbers ("numeric text or a number", made for query strings) written as the JSON numbers a
 * response carries — the same rewrite the OpenAPI document gets (src/http/openapi/components.ts).
 */
function plain(schema: TSchema): Record<string, unknown> {
  const json = JSON.parse(JSON.stringify(schema), (key, value) => (key === SCHEMA_NAME_KEY ? undefined : value));
  return mapSchema(json, jsonShapes) as Record<string, unknown>;
}

const csvRecords = (columns: readonly string[]) => ({
  type: "array",
  items: { type: "object", properties: Object.fromEntries(columns.map((c) => [c, { type: "string" }])), required: [...columns], additionalProperties: false },
});

interface Entry {
  path: string;
  media_type: "application/json" | "text/csv";
  columns: string[] | null;
  schema: Record<string, unknown>;
}

function entries(baseUrl: string): Entry[] {
  const json = (path: string, schema: TSchema): Entry => ({ path, media_type: "application/json", columns: null, schema: plain(schema) });
  const csv = (path: string, columns: readonly string[]): Entry => ({ path, media_type: "text/csv", columns: [...columns], schema: csvRecords(columns) });
  const all: Entry[] = [
    ...Object.entries(AuditResponses).map(([file, schema]) => json(`${BASE}${file}`, schema)),
    json("/transparency/trust-dashboard.json", TransparencyModel.dashboard),
    json("/transparency/wallet-concentration.json", ChainModel.walletConcentration),
    csv(`${BASE}alerts.csv`, ALERTS_CSV_COLUMNS),
    csv(`${BASE}diff/compare.csv`, COMPARE_CSV_COLUMNS),
    csv(`${BASE}diff/export`, DIFF_CSV_COLUMNS),
    csv(`${BASE}export`, EXPORT_COLUMNS),
    // The trend points are flat: their columns are their fields (test/transparency/schema-registry.test.ts reads the header).
    csv("/transparency/wallet-concentration.csv", [
      "generated_at_utc",
      "status",
      "mint",
      ...Object.keys(ChainModel.walletConcentration.properties.trend_points.items.properties),
      ...dottedColumns("trust_context", ChainModel.walletConcentration.properties.trust_context),
    ]),
    json("(every error answer)", ErrorBody),
  ];
  return all.map((e) => ({
    ...e,
    schema: {
      $schema: DIALECT,
      $id: `${baseUrl}${BASE}schemas/v${REGISTRY_VERSION.split(".")[0]}/${e.path.replace(/^\//, "").replace(/[^A-Za-z0-9._-]+/g, "_")}`,
      ...e.schema,
    },
  }));
}

export function schemaRegistry(baseUrl: string, dataTime: string) {
  const list = entries(baseUrl).map((e) => ({ ...e, sha256: createHash("sha256").update(JSON.stringify(e.schema)).digest("hex") }));
  return {
    generated_at_utc: dataTime,
    registry_version: REGISTRY_VERSION,
    dialect: DIALECT,
    count: list.length,
    schemas: list,
    row_schema: plain(ExportRowSchema),
  };
}
