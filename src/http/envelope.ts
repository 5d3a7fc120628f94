import { t, type TSchema } from "elysia";
import { named } from "./openapi/names";

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
      // The one code that says more (AppError's `extra`): a destination host the audio-share policy denies. The replay
      // of a completed Idempotency-Key is not this body: IdempotencyReplay (src/http/openapi/errors.ts).
      host: t.Optional(t.Any({ description: "destination_host_denied: the host refused (a string, or null when there was none)" })),
      reason: t.Optional(t.String({ description: "destination_host_denied: why" })),
    },
    { additionalProperties: false, description: "Every failure" },
  ),
);

/** A success answer: `success: true`, then the answer's own fields. */
export const ok = <T extends object>(body: T) => ({ success: true as const, ...body });

/**
 * A probe's 503 (not ready, degraded): the failure envelope with `service_unavailable`, and the probe's own fields
 * beside it, so a load balancer reads the status and a person reads which check failed as in the 200.
 */
export const Unavailable = <P extends Record<string, TSchema>>(fields: P, description?: string) =>
  t.Object({ success: t.Literal(false), error: t.Literal("service_unavailable"), message: t.String(), request_id: t.String(), ...fields }, { description });

export const isTruthyFlag = (v: string | null | undefined): boolean => v === "1" || v === "true";

/** A boolean flag's query values: 1 / true / the bare flag (`?use_short`, read as "") are on; 0 / false are off. */
export const FLAG_VALUES = ["1", "true", "", "0", "false"] as const;
export const flagOn = (v: string | null | undefined): boolean => v === "" || isTruthyFlag(v);

/**
 * Whether a request asks for the meta block: `include_meta=1`, `=true`, or the bare flag (`?include_meta`, as the spec
 * calls it a boolean flag). `0`, `false` and any other value leave it out.
 */
export function metaRequested(url: string): boolean {
  if (!url.includes("include_meta")) return false;
  return flagOn(new URL(url).searchParams.get("include_meta"));
}

/** The query parameter every JSON route declares (docs/design.md §2); spread it into the route's query object. */
export const includeMetaQuery = {
  include_meta: t.Optional(t.String({ description: "1, true or the bare flag: add meta {request_id, generated_at_utc} to the answer" })),
};

/**
 * include_meta on a route whose answer is not JSON (an HTML page, a CSV, an image): accepted as on every route, so a
 * client that adds it to every call is not refused, and without effect, since such an answer has no place for meta.
 */
export const ignoredMetaQuery = {
  include_meta: t.Optional(t.String({ description: "accepted as on every route; this answer is not JSON and carries no meta" })),
};

/**
 * include_meta for an answer a handler serialises itself (its ETag over the bytes, or gzip/checksum bytes): the
 * block when the request asks for it, else undefined. The core adds the block to every plain-object answer.
 */
export function requestedMeta(request: Request, requestId: unknown, now: Date): { request_id: string; generated_at_utc: string } | undefined {
  if (!metaRequested(request.url)) return undefined;
  return { request_id: typeof requestId === "string" ? requestId : "unknown", generated_at_utc: now.toISOString() };
}
