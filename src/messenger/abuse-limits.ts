// Abuse limits of the messenger routes (docs/messenger.md, "Abuse limits") in ctx.rateLimiter's per-process
// sliding windows. Four counters, each 0 = off:
// - per address, before init data is checked: bounds the verification work one address can cause (generous: many
//   players share one mobile-carrier address).
// - per address, refused init-data checks: past it the refusal is 429 and writes no counter row; valid init data
//   from that address still passes, so a forger behind a shared address cannot lock its players out.
// - per player, after verification: keyed by the Telegram user id, so nobody can spend another player's budget.
// - per address, webhook posts WITHOUT the secret. Telegram's own posts are never counted: a 429 would make
//   Telegram hold and retry updates, and forgeries from elsewhere must not push real updates back.
// Each response carries the X-RateLimit-* headers of the last limit it was counted against; a 429 adds Retry-After.
import type { AppContext } from "../context";
import type { RequestStates } from "../http/core";
import { AppError } from "../http/errors/errors";
import { rateLimitHeaders } from "../http/rate-limit/rate-limit";

export function messengerLimits(ctx: AppContext, states: RequestStates) {
  const limits = ctx.config.messenger.rateLimits;
  const ipOf = (request: Request) => states.get(request)?.ip ?? "unknown";

  /** Counts one request against `limit`; records the headers on the request; throws 429 past the limit. */
  function count(request: Request, group: string, subject: string, limit: number, what: string): void {
    if (limit <= 0) return;
    const decision = ctx.rateLimiter.hit(group, subject, limit);
    const headers = rateLimitHeaders(decision);
    const state = states.get(request);
    // The request state's headers go on every answer, errors included (src/http/core.ts errorResponse).
    if (state) Object.assign(state.headers, headers);
    if (!decision.allowed) {
      throw new AppError("rate_limited", `${what} exceeded ${limit} per minute; retry after ${decision.retryAfterSeconds} s`, { headers });
    }
  }

  return {
    /** The headers recorded on this request so far (the limit headers among them), for a successful answer. */
    headersOf: (request: Request): Record<string, string> => states.get(request)?.headers ?? {},
    /** Every mini-app request, before its init data is checked. */
    address(request: Request): void {
      if (limits.ipPerMin <= 0) return; // off: the peer's address is not read (src/http/request-state.ts)
      const ip = ipOf(request);
      count(request, "messenger-ip", ip, limits.ipPerMin, `Messenger requests from ${ip}`);
    },
    /** A refused init-data check; throws 429 past the limit, else returns so the 401 goes out. */
    initDataRefused(request: Request): void {
      const ip = ipOf(request);
      count(request, "messenger-init-refused", ip, limits.initDataFailuresPerMin, `Refused init-data checks from ${ip}`);
    },
    /** A verified player's request. */
    player(request: Request, telegramUserId: number): void {
      count(request, "messenger-player", String(telegramUserId), limits.playerPerMin, `Messenger requests of player ${telegramUserId}`);
    },
    /** A webhook post without the right secret; throws 429 past the limit, else returns so the 401 goes out. */
    webhookRefused(request: Request): void {
      const ip = ipOf(request);
      count(request, "messenger-webhook-refused", ip, limits.webhookUnauthorizedPerMin, `Bot-webhook posts without the secret token from ${ip}`);
    },
  };
}

export type MessengerLimits = ReturnType<typeof messengerLimits>;
