/**
 * HeraldClient: a small partner client that signs every request (docs/design.md §3), sends a nonce and an
 * Idempotency-Key on mutations (§4), and retries only what is safe to retry.
 *
 * Retry policy (spec "Limits"): only 429, 503, timeouts and network errors; capped exponential backoff with
 * full jitter (cap 1, 2, 4, 8 … s, at most 30 s), or `Retry-After` seconds when the server sends it (≤ 30 s).
 * A retry is the SAME logical request, so it reuses the call's Idempotency-Key (a duplicate then answers 409
 * `idempotency_replay` instead of applying twice); each attempt gets a NEW nonce, timestamp and signature,
 * because nonces are single-use. One more: a mutation with an Idempotency-Key answered 409 `replay_detected` is
 * sent again once, at once, with a new nonce. This client never sends a nonce twice, so that answer means a copy
 * of the attempt reached Herald before: a load balancer resent it when the instance serving the first copy died
 * (deploy/haproxy.cfg does so). The key makes the second attempt safe: it answers the first copy's outcome
 * (`idempotency_replay`) or, if that copy took no effect, applies once. Everything else (400, 401, 403, 409,
 * 500 …) is thrown at once as a HeraldApiError.
 *
 * Typed methods: `client.api.salutesCredit({ body })` and `client.call("POST /api/salutes/credit", { body })`
 * take and return the types generated from the OpenAPI document (./operations.ts, ./api-types.ts).
 *
 * Standalone: imports only its own folder (node:crypto) and the global fetch.
 */
import { callOperation, type CallArgs, createApi, type HeraldApi, type OperationKey, type OperationResponse } from "./operations.js";
import type { Query, RequestOptions } from "./request-types.js";
import { newIdempotencyKey, newNonce, signRequest } from "./sign.js";

export type { Query, QueryValue, RequestOptions, SignedRequester } from "./request-types.js";

export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export interface HeraldClientOptions {
  /** e.g. `https://herald.example.com` (a path prefix is kept and signed as part of the target). */
  baseUrl: string;
  keyId: string;
  secret: string;
  fetch?: FetchLike;
  /** Retries after the first attempt (so at most maxRetries + 1 attempts). Default 4. */
  maxRetries?: number;
  /** Per-attempt timeout covering the response headers and body. Default 15000. */
  timeoutMs?: number;
  /** Waits between attempts; inject to observe or skip the delays. */
  sleep?: (ms: number) => Promise<void>;
  /** Uniform [0, 1) source for the jitter. Default Math.random. */
  random?: () => number;
  /** Milliseconds since the epoch (like Date.now); the signed timestamp is floor(now()/1000). */
  now?: () => number;
}

export const MUTATION_METHODS: ReadonlySet<string> = new Set(["POST", "PATCH", "PUT", "DELETE"]);
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 503]);
export const BACKOFF_BASE_MS = 1000;
export const BACKOFF_CAP_MS = 30_000;

/** A non-2xx answer from Herald. Branch on `code` (the body's `error`), never on `message`. */
export class HeraldApiError extends Error {
  override readonly name = "HeraldApiError";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId: string | null,
    /** Parsed JSON body when it was JSON, else the raw text. */
    readonly body: unknown,
    readonly headers: Headers,
    /** Attempts made for this logical call (1 = no retry). */
    readonly attempts: number,
  ) {
    super(message);
  }
}

/** No HTTP answer: connection failure or per-attempt timeout, after the retries ran out. */
export class HeraldNetworkError extends Error {
  override readonly name = "HeraldNetworkError";
  constructor(
    readonly code: "network_error" | "timeout",
    message: string,
    readonly attempts: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

type AttemptOutcome = { kind: "response"; status: number; headers: Headers; text: string } | { kind: "transport"; error: HeraldNetworkError };

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function appendQuery(params: URLSearchParams, query: Query): void {
  if (query instanceof URLSearchParams) {
    for (const [k, v] of query) params.append(k, v);
    return;
  }
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null) continue;
    if (Array.isArray(v)) for (const item of v) params.append(k, String(item));
    else params.append(k, String(v));
  }
}

function parseBody(text: string): unknown {
  if (text === "") return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export class HeraldClient {
  private readonly base: URL;
  private readonly keyId: string;
  private readonly secret: string;
  private readonly fetchImpl: FetchLike;
  readonly maxRetries: number;
  readonly timeoutMs: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;
  private readonly now: () => number;
  /** One typed method per partner operation (names in ./operations.ts). */
  readonly api: HeraldApi;

  constructor(options: HeraldClientOptions) {
    this.base = new URL(options.baseUrl);
    this.keyId = options.keyId;
    this.secret = options.secret;
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
    this.maxRetries = Math.max(0, Math.floor(options.maxRetries ?? 4));
    this.timeoutMs = options.timeoutMs ?? 15_000;
    this.sleep = options.sleep ?? defaultSleep;
    this.random = options.random ?? Math.random;
    this.now = options.now ?? Date.now;
    this.api = createApi(this);
  }

  /** One operation by its OpenAPI key, e.g. `call("GET /api/partner/users/{user_id}", { path: { user_id: "7" } })`. */
  call<K extends OperationKey>(op: K, ...args: CallArgs<K>): Promise<OperationResponse<K>> {
    return callOperation(this, op, args[0] as Parameters<typeof callOperation>[2]) as Promise<OperationResponse<K>>;
  }

  // The untyped helpers default T to `any`, as fetch-style clients do (biome.json lets this file); typed calls go
  // through `client.call(...)` and `client.api.*`, whose types come from the OpenAPI document.
  get<T = any>(path: string, query?: Query, opts: Omit<RequestOptions, "body" | "query"> = {}): Promise<T> {
    return this.request<T>("GET", path, { ...opts, query });
  }

  post<T = any>(path: string, body?: unknown, opts: Omit<RequestOptions, "body"> = {}): Promise<T> {
    return this.request<T>("POST", path, { ...opts, body });
  }

  put<T = any>(path: string, body?: unknown, opts: Omit<RequestOptions, "body"> = {}): Promise<T> {
    return this.request<T>("PUT", path, { ...opts, body });
  }

  patch<T = any>(path: string, body?: unknown, opts: Omit<RequestOptions, "body"> = {}): Promise<T> {
    return this.request<T>("PATCH", path, { ...opts, body });
  }

  delete<T = any>(path: string, opts: RequestOptions = {}): Promise<T> {
    return this.request<T>("DELETE", path, opts);
  }

  /** The absolute URL and the signing target (`pathname + search`, exactly as it goes on the wire). */
  buildUrl(path: string, query?: Query): { url: string; target: string } {
    const basePath = this.base.pathname.replace(/\/+$/, "");
    const rel = path.startsWith("/") ? path : `/${path}`;
    const url = new URL(this.base.origin + basePath + rel);
    if (query) {
      const params = new URLSearchParams(url.search);
      appendQuery(params, query);
      const qs = params.toString();
      url.search = qs ? `?${qs}` : "";
    }
    // A bare trailing "?" has an empty `search` but would still be sent; drop it so what is signed is what is sent.
    if (url.search === "") url.search = "";
    return { url: url.href, target: url.pathname + url.search };
  }

  /** Backoff before retry number `retry` (0-based): full jitter over min(30 s, 1 s · 2^retry), or Retry-After. */
  retryDelayMs(retry: number, retryAfter: string | null): number {
    const fromHeader = this.parseRetryAfterMs(retryAfter);
    if (fromHeader !== null) return Math.min(fromHeader, BACKOFF_CAP_MS);
    const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.min(retry, 30));
    return Math.floor(this.random() * ceiling);
  }

  private parseRetryAfterMs(value: string | null): number | null {
    if (value === null) return null;
    const v = value.trim();
    if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
    const date = Date.parse(v);
    if (Number.isNaN(date)) return null;
    return Math.max(0, date - this.now());
  }

  async request<T = any>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const verb = method.toUpperCase();
    const mutation = MUTATION_METHODS.has(verb);
    const { url, target } = this.buildUrl(path, opts.query);

    const b = opts.body;
    const bodyBytes = b === undefined ? undefined : b instanceof Uint8Array ? b : new TextEncoder().encode(typeof b === "string" ? b : JSON.stringify(b));

    const idempotencyKey = opts.idempotencyKey === false ? undefined : (opts.idempotencyKey ?? (mutation ? newIdempotencyKey() : undefined));
    const wantNonce = opts.nonce === undefined ? mutation : opts.nonce !== false;

    let replayRetried = false;
    for (let attempt = 1; ; attempt++) {
      const nonce = !wantNonce ? undefined : attempt === 1 && typeof opts.nonce === "string" ? opts.nonce : newNonce();
      const signed = signRequest({
        keyId: this.keyId,
        secret: this.secret,
        method: verb,
        target,
        body: bodyBytes,
        timestamp: Math.floor(this.now() / 1000),
        nonce,
      });
      const own: Record<string, string> = { ...signed.headers };
      if (bodyBytes !== undefined) own["content-type"] = "application/json";
      if (idempotencyKey !== undefined) own["Idempotency-Key"] = idempotencyKey;
      const ownNames = new Set(Object.keys(own).map((k) => k.toLowerCase()));
      const headers: Record<string, string> = { accept: "application/json" };
      for (const [k, v] of Object.entries(opts.headers ?? {})) {
        const lower = k.toLowerCase();
        if (lower === "accept") headers.accept = v;
        else if (!ownNames.has(lower)) headers[k] = v;
      }
      Object.assign(headers, own);

      const outcome = await this.attempt(url, { method: verb, headers, body: bodyBytes }, attempt);
      const retriesLeft = attempt <= this.maxRetries;

      if (outcome.kind === "transport") {
        if (!retriesLeft) throw outcome.error;
        await this.sleep(this.retryDelayMs(attempt - 1, null));
        continue;
      }

      if (outcome.status >= 200 && outcome.status < 300) return parseBody(outcome.text) as T;
      if (RETRYABLE_STATUSES.has(outcome.status) && retriesLeft) {
        await this.sleep(this.retryDelayMs(attempt - 1, outcome.headers.get("retry-after")));
        continue;
      }
      const error = this.apiError(outcome.status, outcome.headers, outcome.text, attempt);
      // A copy of this attempt was resent by a proxy (see the retry policy above): once, with a new nonce, the same key.
      if (error.code === "replay_detected" && nonce !== undefined && idempotencyKey !== undefined && !replayRetried && retriesLeft) {
        replayRetried = true;
        continue;
      }
      throw error;
    }
  }

  private async attempt(url: string, init: { method: string; headers: Record<string, string>; body?: Uint8Array }, attempt: number): Promise<AttemptOutcome> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.timeoutMs);
    try {
      const res = await this.fetchImpl(url, { ...init, signal: controller.signal, redirect: "manual" });
      const text = await res.text();
      return { kind: "response", status: res.status, headers: res.headers, text };
    } catch (cause) {
      const what = timedOut ? `timed out after ${this.timeoutMs} ms` : `failed: ${cause instanceof Error ? cause.message : String(cause)}`;
      return { kind: "transport", error: new HeraldNetworkError(timedOut ? "timeout" : "network_error", `${init.method} ${url} ${what}`, attempt, { cause }) };
    } finally {
      clearTimeout(timer);
    }
  }

  private apiError(status: number, headers: Headers, text: string, attempts: number): HeraldApiError {
    const body = parseBody(text);
    const obj = body !== null && typeof body === "object" ? (body as Record<string, unknown>) : {};
    const code = typeof obj.error === "string" ? obj.error : `http_${status}`;
    const message = typeof obj.message === "string" ? obj.message : `HTTP ${status}`;
    const requestId = (typeof obj.request_id === "string" ? obj.request_id : null) ?? headers.get("x-request-id") ?? null;
    return new HeraldApiError(status, code, message, requestId, body, headers, attempts);
  }
}
