import { type SignRequestInput, signRequest } from "../../client/sign";

// The signed curl command `herald sign` prints (src/cli/sign.ts), written once: the API reference's code samples
// (src/http/openapi/samples.ts) show the same command, signed with fixed illustration values.

/** A word for a POSIX shell: single-quoted, a quote inside written as '\''. */
export const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

const MUTATIONS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** What is signed (a timestamp now when absent), the URL curl is given, and a mutation's nonce and Idempotency-Key. */
type CurlRequest = Omit<SignRequestInput, "body" | "nonce"> & { url: string; body: string | null; nonce: () => string; idempotencyKey: () => string };

/**
 * The signed request as curl's words, one per header (`herald sign` prints them joined by spaces), with the headers
 * sent and the canonical string signed.
 */
export function signedCurl(r: CurlRequest) {
  const mutation = MUTATIONS.has(r.method);
  const signed = signRequest({ ...r, body: r.body ?? "", nonce: mutation ? r.nonce() : null });
  const headers: Record<string, string> = { ...signed.headers };
  if (mutation) headers["Idempotency-Key"] = r.idempotencyKey();
  if (r.body) headers["Content-Type"] = "application/json";
  const words = [
    `curl -sS -X ${r.method}`,
    ...Object.entries(headers).map(([k, v]) => `-H ${shellQuote(`${k}: ${v}`)}`),
    ...(r.body ? [`--data-binary ${shellQuote(r.body)}`] : []),
    shellQuote(r.url),
  ];
  return { words, headers, canonical: signed.canonical };
}
