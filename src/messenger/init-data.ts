// Telegram Mini App init data: the raw query string Telegram hands the mini-app, signed for this bot.
//
// The HMAC is @telegram-apps/init-data-node's (hashToken + signData); its `validate` is not used because it compares
// the hash with `!==` (not constant-time) and reads Date.now() for expiry (tests drive time through ctx.clock), and
// its `parse` refuses init data without a `signature` field (older clients) and cost 17 µs a call. The third-party
// Ed25519 check uses node:crypto rather than validate3rd, which has Telegram's two keys built in (no operator key, no
// test signature) and verifies through async WebCrypto: 102 µs a check against 62 µs for node:crypto's synchronous
// verify with a key prepared once (10,000 checks each, 2026-11-22), so the identity hook awaits only the store.
import { createPublicKey, type KeyObject, timingSafeEqual, verify as verifyEd25519 } from "node:crypto";
import { hashToken, signData } from "@telegram-apps/init-data-node";
import type { Config } from "../config";
import { AppError } from "../http/errors/errors";
import { INIT_DATA_MAX_LENGTH } from "./model";
import { botNotConfigured } from "./route-common";

export type InitDataFailure = "init_data_missing" | "init_data_malformed" | "init_data_signature_invalid" | "init_data_expired" | "init_data_future_dated";

/** Who the init data says the player is, once its signature and age are checked. */
export interface InitDataIdentity {
  telegramUserId: number;
  username: string | null;
  firstName: string | null;
  languageCode: string | null;
  isPremium: boolean;
  authDate: number;
  startParam: string | null;
  scheme: "hmac" | "ed25519";
}

/**
 * Telegram's published Ed25519 public keys for third-party validation of init data (Telegram's Mini Apps docs,
 * "Validating data for third-party use"), for its production and test environments.
 */
export const TELEGRAM_ED25519_KEYS = {
  production: "e7bf03a2fa4602af4580703d88dda5bb59f32ed8b02a56c187fe7d34caed242d",
  test: "40055058a4ee38156a06562e52eece92a771bcd8346a8c4615cb7376eddf72ec",
} as const;

/** MESSENGER_INIT_DATA_ED25519_KEYS (production, test or 64 hex characters) as a verifying key. */
export function ed25519PublicKey(setting: string): KeyObject {
  const hex = setting === "production" || setting === "test" ? TELEGRAM_ED25519_KEYS[setting] : setting;
  return createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(hex, "hex").toString("base64url") }, format: "jwk" });
}

const HEX64 = /^[0-9a-f]{64}$/;
/** Verified init data kept per process (a cache, not coordination state): a mini-app sends the same string on
 * every request of a session, so a hit skips the parse and the HMAC; the age is still checked on every request. */
const VERIFIED_CACHE_MAX = 10_000;

export class InitDataError extends AppError {
  constructor(
    readonly reason: InitDataFailure,
    message: string,
    details?: Record<string, unknown>,
  ) {
    super(reason, message, details ? { details } : {});
  }
}

interface Parsed {
  params: URLSearchParams;
  hash: string | null;
  signature: string | null;
  authDate: number;
  user: InitDataIdentity;
}

/** Splits and checks the shape: one value per key, an integer auth_date, a user object with an integer id. */
function parseShape(raw: string): Parsed {
  let params: URLSearchParams;
  try {
    params = new URLSearchParams(raw);
  } catch {
    throw new InitDataError("init_data_malformed", "init data is not a URL-encoded query string");
  }
  const seen = new Set<string>();
  for (const key of params.keys()) {
    // A repeated key is ambiguous (which value did Telegram sign?): refuse rather than pick one.
    if (seen.has(key)) throw new InitDataError("init_data_malformed", `init data has the key "${key.slice(0, 40)}" twice`);
    seen.add(key);
  }
  const authRaw = params.get("auth_date");
  if (!authRaw || !/^\d{1,12}$/.test(authRaw)) throw new InitDataError("init_data_malformed", "init data has no integer auth_date");
  const userRaw = params.get("user");
  if (!userRaw)
    throw new InitDataError("init_data_malformed", "init data has no user field (open the mini-app from a chat with the bot, not from an inline query)");
  let u: Record<string, unknown>;
  try {
    u = JSON.parse(userRaw) as Record<string, unknown>;
  } catch {
    throw new InitDataError("init_data_malformed", "init data's user field is not JSON");
  }
  if (!u || typeof u !== "object" || !Number.isSafeInteger(u.id) || (u.id as number) <= 0) {
    throw new InitDataError("init_data_malformed", "init data's user has no positive integer id");
  }
  const str = (v: unknown, max: number) => (typeof v === "string" && v.length > 0 ? v.slice(0, max) : null);
  const authDate = Number(authRaw);
  return {
    params,
    hash: params.get("hash"),
    signature: params.get("signature") || null,
    authDate,
    user: {
      telegramUserId: u.id as number,
      username: str(u.username, 64),
      firstName: str(u.first_name, 128),
      languageCode: str(u.language_code, 16),
      isPremium: u.is_premium === true,
      authDate,
      startParam: str(params.get("start_param"), 512),
      scheme: "hmac",
    },
  };
}

/** Every field but the `skipped` ones, as key=value, sorted, joined by newlines. */
const sortedPairs = (params: URLSearchParams, skipped: string[]) =>
  [...params]
    .filter(([key]) => !skipped.includes(key))
    .map(([key, value]) => `${key}=${value}`)
    .sort()
    .join("\n");

/** Telegram's data-check string: every field except `hash`. */
export const dataCheckString = (params: URLSearchParams): string => sortedPairs(params, ["hash"]);

/** What Telegram signs with Ed25519: `<bot id>:WebAppData`, then every pair but `hash` and `signature`. */
export const thirdPartyCheckString = (params: URLSearchParams, botId: number): string => `${botId}:WebAppData\n${sortedPairs(params, ["hash", "signature"])}`;

export class InitDataVerifier {
  /** HMAC-SHA256("WebAppData", bot token), computed once: each check is then one HMAC. */
  private readonly secretKey: ArrayBuffer | null;
  private readonly botId: number | null;
  private readonly ed25519Key: KeyObject;
  private readonly verified = new Map<string, { parsed: Parsed; scheme: "hmac" | "ed25519" }>();

  constructor(private readonly config: Config["messenger"]) {
    // As bytes, not hex: with a hex key the library decodes it again on every call.
    this.secretKey = config.botToken ? new Uint8Array(hashToken(config.botToken)).buffer : null;
    this.botId = config.botToken ? Number(config.botToken.split(":")[0]) : null;
    this.ed25519Key = ed25519PublicKey(config.ed25519Keys);
  }

  get configured(): boolean {
    return this.secretKey !== null;
  }

  private hmacMatches(p: Parsed): boolean {
    if (!p.hash || !HEX64.test(p.hash)) return false;
    const expected = Buffer.from(signData(dataCheckString(p.params), this.secretKey!, { tokenHashed: true }), "hex");
    return timingSafeEqual(expected, Buffer.from(p.hash, "hex"));
  }

  private ed25519Matches(p: Parsed): boolean {
    if (!p.signature || !/^[A-Za-z0-9_+/=-]{40,128}$/.test(p.signature)) return false;
    const signature = Buffer.from(p.signature, "base64");
    if (signature.length !== 64) return false;
    return verifyEd25519(null, Buffer.from(thirdPartyCheckString(p.params, this.botId!)), this.ed25519Key, signature);
  }

  /** Checks init data at `nowMs`; throws the InitDataError naming the first failure. */
  verify(raw: string | null | undefined, nowMs: number): InitDataIdentity {
    // No credential at all is 401 whatever the configuration; init data that is there cannot be checked without
    // the bot's token (503).
    if (raw === null || raw === undefined || raw.trim() === "") {
      throw new InitDataError(
        "init_data_missing",
        "Send the mini-app's init data as `Authorization: tma <init data>`, the init_data query parameter or the init_data body field",
      );
    }
    if (!this.configured) throw botNotConfigured();
    if (raw.length > INIT_DATA_MAX_LENGTH) throw new InitDataError("init_data_malformed", `init data is longer than ${INIT_DATA_MAX_LENGTH} characters`);
    const hit = this.verified.get(raw);
    if (hit) return this.accept(hit.parsed, hit.scheme, nowMs);
    const parsed = parseShape(raw);
    const mode = this.config.initDataMode;
    if (mode !== "ed25519" && this.hmacMatches(parsed)) return this.remember(raw, parsed, "hmac", nowMs);
    if (mode !== "hmac" && this.ed25519Matches(parsed)) return this.remember(raw, parsed, "ed25519", nowMs);
    return this.refuse(parsed);
  }

  private remember(raw: string, parsed: Parsed, scheme: "hmac" | "ed25519", nowMs: number): InitDataIdentity {
    const identity = this.accept(parsed, scheme, nowMs);
    // Bounded: when full, start over (the working set is the sessions of the last minutes).
    if (this.verified.size >= VERIFIED_CACHE_MAX) this.verified.clear();
    this.verified.set(raw, { parsed, scheme });
    return identity;
  }

  private refuse(parsed: Parsed): never {
    const mode = this.config.initDataMode;
    const what = mode === "hmac" ? "hash" : mode === "ed25519" ? "Ed25519 signature" : "hash or Ed25519 signature";
    const missing = mode === "hmac" ? !parsed.hash : mode === "ed25519" ? !parsed.signature : !parsed.hash && !parsed.signature;
    if (missing) throw new InitDataError("init_data_malformed", `init data has no ${what}`);
    throw new InitDataError(
      "init_data_signature_invalid",
      `init data's ${what} does not match: it was changed after Telegram signed it, or signed for another bot`,
    );
  }

  private accept(parsed: Parsed, scheme: "hmac" | "ed25519", nowMs: number): InitDataIdentity {
    // Checked after the signature, so an unsigned caller learns nothing about the clock. A date ahead of ours by more
    // than clock skew was not signed just now: minted with a leaked token (and never expiring), or our clock is behind.
    const skew = this.config.initDataMaxFutureSkewSeconds;
    if (parsed.authDate * 1000 > nowMs + skew * 1000) {
      const aheadSeconds = Math.ceil((parsed.authDate * 1000 - nowMs) / 1000);
      throw new InitDataError(
        "init_data_future_dated",
        `init data is dated ${new Date(parsed.authDate * 1000).toISOString()}, ${aheadSeconds} s after this server's clock (${new Date(nowMs).toISOString()}); at most ${skew} s of clock skew is allowed`,
        { auth_date: parsed.authDate, server_time: Math.floor(nowMs / 1000), max_future_skew_seconds: skew },
      );
    }
    const maxAge = this.config.initDataMaxAgeSeconds;
    if (parsed.authDate * 1000 + maxAge * 1000 < nowMs) {
      throw new InitDataError(
        "init_data_expired",
        `init data was signed at ${new Date(parsed.authDate * 1000).toISOString()}, more than ${maxAge} s ago; reopen the mini-app`,
        { auth_date: parsed.authDate, max_age_seconds: maxAge },
      );
    }
    return { ...parsed.user, scheme };
  }
}

/** `Authorization: tma <init data>`, Telegram's documented header form; null when the header is another scheme. */
export function initDataFromHeader(authorization: string | null): string | null {
  if (!authorization) return null;
  // `tma` (any case), whitespace, then the init data: the same as /^tma\s+(.+)$/is without a regex per request.
  const a = authorization.trim();
  if (a.length < 5 || a.slice(0, 3).toLowerCase() !== "tma" || a[3]!.trim() !== "") return null;
  return a.slice(4).trimStart() || null;
}
