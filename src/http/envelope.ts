import { t, type TSchema } from "elysia";
import { named } from "./openapi-names";

/** `include_meta=1|true` on any route adds this block. */
export const MetaSchema = named("Meta", t.Object({ request_id: t.String(), generated_at_utc: t.String({ format: "date-time" }) }));

/** A success body: `{ success: true, ...fields }`, plus the optional `meta` every route may add. */
export const Envelope = <P extends Record<string, TSchema>>(fields: P, description?: string) =>
  t.Object({ success: t.Literal(true), ...fields, meta: t.Optional(MetaSchema) }, { description });

export const ErrorBody = named(
  "Error",
  t.Object(
    {
      success: t.Literal(false),
      error: t.String({ description: "Stable machine-readable code from /api/partner/errors.json; branch on this." }),
      message: t.String({ description: "For people and logs; may change." }),
      request_id: t.String(),
      details: t.Optional(t.Any()),
    },
    { additionalProperties: true, description: "Every failure" },
  ),
);

export const isTruthyFlag = (v: string | null | undefined): boolean => v === "1" || v === "true";
