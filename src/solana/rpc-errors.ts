// How an RPC attempt failed, and what that means for retrying it. Every attempt's outcome is recorded
// (chain_rpc_calls) under one of these names; the status checks count them per host.

export type RpcOutcome = "ok" | "rate_limited" | "http_5xx" | "http_error" | "timeout" | "network" | "malformed" | "rpc_error" | "breaker_open";

export class RpcCallError extends Error {
  constructor(
    readonly outcome: Exclude<RpcOutcome, "ok">,
    message: string,
    readonly opts: {
      httpStatus?: number;
      /** From a 429's Retry-After header. */
      retryAfterMs?: number;
      /** Worth another attempt (same URL after backoff, then the next URL). */
      retryable: boolean;
      /** Counts against the URL's circuit breaker: the node, not the request, is at fault. */
      hostFault: boolean;
      rpcCode?: number;
    },
  ) {
    super(message);
    this.name = "RpcCallError";
  }
}

/** Every URL failed or was skipped: the caller reports the chain as unavailable (503), never as zeros. */
export class ChainUnavailableError extends Error {
  constructor(
    message: string,
    readonly lastError: RpcCallError | null,
  ) {
    super(message);
    this.name = "ChainUnavailableError";
  }
}

// JSON-RPC errors a healthier node may not give: node behind or unhealthy, block not yet available, internal.
const RETRYABLE_RPC_CODES = new Set([-32004, -32005, -32014, -32016, -32603, 429]);

export function httpError(status: number, retryAfter: string | null): RpcCallError {
  if (status === 429) {
    const seconds = retryAfter !== null && /^\d{1,6}$/.test(retryAfter.trim()) ? Number(retryAfter) : undefined;
    return new RpcCallError("rate_limited", `HTTP 429 from the RPC node${seconds === undefined ? "" : ` (Retry-After ${seconds} s)`}`, {
      httpStatus: 429,
      retryAfterMs: seconds === undefined ? undefined : seconds * 1000,
      retryable: true,
      hostFault: true,
    });
  }
  // The body is not quoted: provider error pages can echo the API key, and job errors are published in proofs.
  if (status >= 500) return new RpcCallError("http_5xx", `HTTP ${status} from the RPC node`, { httpStatus: status, retryable: true, hostFault: true });
  // 401/403/404: a wrong URL or key. Another URL may work; this one will not get better by retrying.
  return new RpcCallError("http_error", `HTTP ${status} from the RPC node (check the URL and its API key)`, {
    httpStatus: status,
    retryable: false,
    hostFault: true,
  });
}

export function rpcError(code: unknown, message: string): RpcCallError {
  const n = typeof code === "number" ? code : Number.NaN;
  return new RpcCallError("rpc_error", `RPC error ${Number.isNaN(n) ? "?" : n}: ${message.slice(0, 200)}`, {
    rpcCode: Number.isNaN(n) ? undefined : n,
    retryable: RETRYABLE_RPC_CODES.has(n),
    hostFault: RETRYABLE_RPC_CODES.has(n),
  });
}

export const timeoutError = (ms: number) => new RpcCallError("timeout", `no complete reply within ${ms} ms`, { retryable: true, hostFault: true });

export const malformed = (what: string) => new RpcCallError("malformed", `malformed reply: ${what.slice(0, 200)}`, { retryable: true, hostFault: true });

/**
 * Maps whatever a call threw to an RpcCallError. @solana/web3.js reports JSON-RPC errors as SolanaJSONRPCError
 * (with `code`), shape violations as superstruct StructErrors, unparseable bodies as SyntaxErrors; our fetch
 * wrapper has already turned HTTP statuses, timeouts and socket errors into RpcCallErrors.
 */
export function classify(err: unknown): RpcCallError {
  if (err instanceof RpcCallError) return err;
  const e = err as { name?: string; message?: string; code?: unknown };
  const message = e?.message ?? String(err);
  if (e?.name === "SolanaJSONRPCError") return rpcError(e.code, message);
  if (e?.name === "TimeoutError" || e?.name === "AbortError") return timeoutError(0);
  // StructError, SyntaxError, "Invalid public key input" and the like: the reply was not what a node sends.
  return malformed(`${e?.name ?? "Error"}: ${message}`);
}

/**
 * Error texts end up in chain_rpc_calls and, through a failed job's error, in public proofs. An RPC URL's path
 * and query often carry an API key, so any URL in a message is cut down to scheme://host.
 */
export function redactUrls(message: string): string {
  return message.replace(
    /\b(https?|wss?):\/\/([^\s/?#"'@]*@)?([^\s/?#"']+)[^\s"']*/gi,
    (_m, scheme: string, _cred: string, host: string) => `${scheme}://${host}`,
  );
}
