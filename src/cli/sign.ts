import { newIdempotencyKey, newNonce, signRequest } from "../client/sign";
import { flagString, UsageError, type ParsedArgs } from "./args";
import { emit } from "./output";

const MUTATIONS = new Set(["POST", "PUT", "PATCH", "DELETE"]);
const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** `herald sign --key ID --secret S METHOD URL [BODY]`: prints a ready curl command (signed now). */
export function signCommand(args: ParsedArgs, json: boolean): number {
  const keyId = flagString(args, "key");
  const secret = flagString(args, "secret");
  const [methodRaw, url, body] = args.positionals;
  if (!keyId || !secret || !methodRaw || !url) throw new UsageError("usage: herald sign --key ID --secret S METHOD URL [BODY]");
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`not an absolute URL: ${url}`);
  }
  if (parsed.search === "") parsed.search = ""; // drop a bare "?": sign exactly what curl will send
  const method = methodRaw.toUpperCase();
  const mutation = MUTATIONS.has(method);
  const nonce = mutation ? newNonce() : null;
  const signed = signRequest({ keyId, secret, method, target: parsed.pathname + parsed.search, body: body ?? "", nonce });
  const headers: Record<string, string> = { ...signed.headers } as Record<string, string>;
  if (mutation) headers["Idempotency-Key"] = newIdempotencyKey();
  if (body) headers["Content-Type"] = "application/json";
  const parts = ["curl", "-sS", "-X", method, ...Object.entries(headers).flatMap(([k, v]) => ["-H", shellQuote(`${k}: ${v}`)])];
  if (body) parts.push("--data-binary", shellQuote(body));
  parts.push(shellQuote(parsed.href));
  emit(json, { method, url: parsed.href, headers, body: body ?? null, canonical: signed.canonical, curl: parts.join(" ") }, () => parts.join(" "));
  return 0;
}
