/**
 * The shapes of one signed request, shared by the client (client.ts) and the typed operations (operations.ts)
 * without either importing the other. Standalone: no imports.
 */

export type QueryValue = string | number | boolean | null | undefined | ReadonlyArray<string | number | boolean>;
export type Query = Record<string, QueryValue> | URLSearchParams;

export interface RequestOptions {
  /** Plain values are sent as JSON; a string or Uint8Array is sent as-is (must already be JSON). */
  body?: unknown;
  query?: Query;
  /**
   * Mutations: defaults to a fresh UUID per logical call, reused across that call's retries.
   * Pass your own to make a call safely repeatable across process restarts; `false` sends none.
   * On non-mutations it is sent only when given.
   */
  idempotencyKey?: string | false;
  /**
   * Default: a fresh nonce per attempt on mutations, none on GET/HEAD. `true` forces one on every method,
   * `false` never sends one. A string is used for the FIRST attempt; retries get fresh nonces.
   */
  nonce?: boolean | string;
  /** Extra headers (e.g. X-Request-ID). The signature, nonce, Idempotency-Key and content-type headers always win. */
  headers?: Record<string, string>;
}

/** What the typed operations need of a client: one signed request (HeraldClient is one). */
export interface SignedRequester {
  request<T = unknown>(method: string, path: string, opts?: RequestOptions): Promise<T>;
}
