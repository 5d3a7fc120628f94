import { t, type TSchema } from "elysia";
import { ErrorBody } from "../envelope";

// A route declares only the refusals of its own checks: the document derives the rest from how the route is
// served (completeOperation, src/http/openapi/contract.ts): 400 where it reads a parameter or body, 408, 413 and
// 415 for bodies, 414 and 503 everywhere, 429 behind a limit, 401 from a partner's, mini-app's or bot's
// credential, 409 (a replayed nonce) from a partner's, 403 from an operator's. Refusals are thrown and answered by
// the core's onError, which Elysia does not check against `response`: the entries only document.

/** Spread into a route's `response`: the error statuses it answers beyond those derived. */
export const refuses = <const S extends readonly number[]>(...statuses: S) =>
  Object.fromEntries(statuses.map((s) => [s, ErrorBody])) as { [K in S[number]]: typeof ErrorBody };

/** A signed partner read: its key's mode or scope (403), an id that is not the caller's (404). */
export const readErrors = refuses(403, 404);

/** A signed partner mutation: a read's, and an Idempotency-Key reused with another body (422, which a read never answers). */
export const writeErrors = refuses(403, 404, 422);

/** A refusal in a detail's `responses`, with what it means on this route. */
export const refusal = (description: string) => ({ description, content: { "application/json": { schema: ErrorBody } } });

/** A route's detail: the tag it is listed under in the document, and its summary. */
export const tagged = (tag: string) => (summary: string) => ({ tags: [tag], summary });
export const partnerTag = tagged("partner");
export const publicTag = tagged("public");
export const transparencyTag = tagged("transparency");

/** A field that is present with null when there is no value. */
export const nullable = <T extends TSchema>(s: T) => t.Union([s, t.Null()]);
