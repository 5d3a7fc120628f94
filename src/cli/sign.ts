import { newIdempotencyKey, newNonce } from "../client/sign";
import { signedCurl } from "../http/formats/curl";
import { flagString, UsageError, type ParsedArgs } from "./args";
import { emit } from "./output";

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
  const target = parsed.pathname + parsed.search;
  const { words, headers, canonical } = signedCurl({
    keyId,
    secret,
    method,
    url: parsed.href,
    target,
    body: body ?? null,
    nonce: newNonce,
    idempotencyKey: newIdempotencyKey,
  });
  const curl = words.join(" ");
  emit(json, { method, url: parsed.href, headers, body: body ?? null, canonical, curl }, () => curl);
  return 0;
}
