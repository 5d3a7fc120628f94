import type { Server } from "bun";
import type { AppContext } from "../context";
import { AppError } from "./errors/errors";
import { requestIdFor } from "./request-id";
import { CONTENT_TYPE_OPTIONS, NOSNIFF, STRICT_TRANSPORT, STRICT_TRANSPORT_SECURITY } from "./security-headers";

// A wrapper, not `extends WeakMap`: the subclass cost bench credit ~5 % (8,738 against 9,210 credits/s, mean of 4–5 runs).
export class RequestStates {
  private readonly map = new WeakMap<Request, RequestState>();
  get(request: Request): RequestState | undefined {
    return this.map.get(request);
  }
  set(request: Request, state: RequestState): void {
    this.map.set(request, state);
  }
}

export function clientIp(ctx: AppContext, request: Request, server: Server<unknown> | null): string {
  if (ctx.config.trustProxy) {
    // The RIGHTMOST entry is the one our proxy appended; everything left of it is whatever the client sent.
    const xff = request.headers.get("x-forwarded-for");
    const last = xff?.split(",").pop()?.trim();
    if (last) return last;
  }
  return server?.requestIP(request)?.address ?? "127.0.0.1";
}

/**
 * What Herald knows about one request while it runs; keyed by the Request object, dropped with it. Its client address
 * is read only when first asked for: Bun's `server.requestIP` asks the kernel each time, 3–8 µs of CPU against 19 µs
 * for a whole raw Bun.serve JSON answer (bench/README.md "http"). Every refusal reads it while the connection is
 * certainly open (the 403 digest groups refusals by prefix).
 */
export class RequestState {
  readonly id: string;
  readonly startedNs = Bun.nanoseconds();
  /** Exact request body bytes, kept for signature verification. */
  rawBody: Uint8Array | null = null;
  partnerKeyId: string | null = null;
  status: number | null = null;
  errorCode: string | null = null;
  headers: Record<string, string>;
  /**
   * A malformed JSON body is reported after authentication, not before: a request with a bad signature gets 401
   * whatever its body looks like, so the body is never parsed into an answer for an unauthenticated caller.
   */
  parseError: AppError | null = null;
  /** What the partner guard proved about this request (src/auth/partner-plugin.ts); null before or without it. */
  partner: object | null = null;
  /** Set when the log row and metrics count are taken: a route run again (ResumeLater) must not take them twice. */
  finished = false;
  /**
   * Set by a console page for a browser (src/auth/session-plugin.ts, a `RefusingPage`): a query parameter the page
   * refuses (400 invalid_query) is answered with the page again, the message on top, instead of the JSON envelope.
   */
  pageRefusal: ((error: AppError) => Promise<Response>) | null = null;
  private address: string | null = null;

  constructor(
    private readonly ctx: AppContext,
    private readonly request: Request,
    private readonly server: Server<unknown> | null,
  ) {
    this.id = requestIdFor(request.headers.get("x-request-id"), ctx.rng);
    // Every refusal made from this state carries it too (src/http/security-headers.ts: HSTS in production).
    this.headers = ctx.config.isProduction ? { [STRICT_TRANSPORT]: STRICT_TRANSPORT_SECURITY } : {};
  }

  /** The client address (`clientIp`), read when first asked for. */
  get ip(): string {
    this.address ??= clientIp(this.ctx, this.request, this.server);
    return this.address;
  }

  /**
   * The client address if something has read it (a rate limit, an allow-list, a session, a refusal), else null:
   * what the request-log row records, so that a request nothing needed the address for costs no read of it.
   */
  get knownIp(): string | null {
    return this.address;
  }
}

export function newRequestState(ctx: AppContext, request: Request, server: Server<unknown> | null): RequestState {
  return new RequestState(ctx, request, server);
}

/**
 * The path and the length of the request target (path and query) of a URL as Bun hands it to a handler: already
 * normalised (dot segments resolved, percent-encoded), so slicing the string finds what `new URL` would, without
 * building one for every request (about 1 µs, bench/README.md "profile").
 */
export function targetOf(url: string): { path: string; targetLength: number } {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start === -1) return { path: "/", targetLength: 1 };
  let end = url.indexOf("?", start);
  if (end === -1) end = url.indexOf("#", start);
  return { path: end === -1 ? url.slice(start) : url.slice(start, end), targetLength: url.length - start };
}

/**
 * Notes a refusal on its request's state, whatever answers it (the JSON envelope, a console page): its status and
 * code for the log row, and its client address, read now while the connection is open (RequestState.knownIp).
 */
export function refused(state: RequestState, err: AppError): void {
  state.status = err.status;
  state.errorCode = err.code;
  void state.ip;
}

export function errorResponse(err: AppError, state: RequestState | undefined): Response {
  const body: Record<string, unknown> = {
    success: false,
    error: err.code,
    message: err.message,
    request_id: state?.id ?? "unknown",
    ...err.extra,
  };
  if (err.details !== undefined) body.details = err.details;
  const headers: Record<string, string> = { "content-type": "application/json", [CONTENT_TYPE_OPTIONS]: NOSNIFF, ...state?.headers, ...err.headers };
  if (state) {
    headers["x-request-id"] = state.id;
    refused(state, err);
  }
  return new Response(JSON.stringify(body), { status: err.status, headers });
}

/**
 * The longest path + query Herald reads. `herald` and `npm start` raise Bun's --max-http-header-size to 64 KiB, so a
 * target between this and 64 KiB gets Herald's JSON 414 rather than Bun's bare 431 (docs/http-conventions.md).
 */
export const MAX_TARGET_CHARS = 8192;

/**
 * A body over the limit (src/http/body/body-deadline.ts reads and drops the rest of it first). `close`: the rest was
 * not read — past the drain limit, or not in time — so the connection closes after the answer.
 */
export const tooLarge = (maxBytes: number, close = false) =>
  new AppError("payload_too_large", `Request body exceeds the ${maxBytes}-byte limit`, {
    details: { max_bytes: maxBytes },
    ...(close ? { headers: { connection: "close" } } : {}),
  });

/** Whether the request's Content-Length declares a body over the limit (refused with 413 before routing). */
export function declaredTooLarge(maxBodyBytes: number, request: Request): boolean {
  const length = request.headers.get("content-length");
  return length !== null && length !== "" && Number(length) > maxBodyBytes;
}

/**
 * The size guards of the native routes (src/http/native-routes.ts), before routing: 413 for a Content-Length over the
 * body limit, 414 for a target over MAX_TARGET_CHARS. They take GET and HEAD only, so the rest of a refused body is
 * left to Bun (the HTTP core drains it first: BodyReads.refuseDeclared).
 */
export function sizeRefusal(maxBodyBytes: number, request: Request, targetLength: number, state: RequestState): Response | undefined {
  if (declaredTooLarge(maxBodyBytes, request)) return errorResponse(tooLarge(maxBodyBytes), state);
  return targetRefusal(targetLength, state);
}

/** The 414 of a request target over MAX_TARGET_CHARS (the second of the size guards), else undefined. */
export function targetRefusal(targetLength: number, state: RequestState): Response | undefined {
  if (targetLength <= MAX_TARGET_CHARS) return undefined;
  return errorResponse(new AppError("uri_too_long", `The request target (path and query) is longer than ${MAX_TARGET_CHARS} characters`), state);
}
