import { ErrorBody } from "../envelope";

// The refusals a signed partner route declares, once for every partner route and both of its mounts (live and
// sandbox). The document adds what the serving itself implies on every operation (src/http/openapi/contract.ts:
// 408 where a body is read, 414, 503); these are the statuses of the route's own checks and verbs.

/**
 * A signed read: a bad query or path (400), the credential, its mode or scope (401, 403), an id that is not one of
 * the caller's (404), a nonce seen before (409 replay_detected), the key's rate limit (429).
 */
export const readErrors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 429: ErrorBody };

/** A body over the limit (413) or not JSON (415): the core answers them on every route that takes a body. */
export const bodyErrors = { 413: ErrorBody, 415: ErrorBody };

/**
 * A signed mutation: a read's, its body's, and an Idempotency-Key reused with another body (422
 * idempotency_key_reused, the catalog's one 422: a read, which claims no key, never answers it). Its conflicts and
 * idempotent replays are 409s, like a replayed nonce.
 */
export const writeErrors = { ...readErrors, ...bodyErrors, 422: ErrorBody };
