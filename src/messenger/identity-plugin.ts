// `messenger: true` on a route: the caller proves who they are with Telegram init data, sent as
// `Authorization: tma <init data>` (Telegram's documented form), the `init_data` query parameter, or the
// `init_data` body field — first found in that order. The player row is resolved (created on first contact), except
// on a read-only route (`messenger: "read-only"`, the previews), which writes nothing (players.ts, playerToRead).
import { Elysia } from "elysia";
import type { AppContext } from "../context";
import type { MessengerLimits } from "./abuse-limits";
import { bump } from "./counters";
import { InitDataError, InitDataVerifier, initDataFromHeader, type InitDataIdentity } from "./init-data";
import { ensurePlayer, type PlayerRow, playerToRead } from "./players";

export interface MessengerRequest {
  identity: InitDataIdentity;
  player: PlayerRow;
}

export const MESSENGER_AUTH_DESCRIPTION =
  "Messenger mini-app route: Telegram init data as `Authorization: tma <init data>`, the init_data query parameter or the init_data body field.";

export function messengerIdentity(ctx: AppContext, limits: MessengerLimits) {
  const verifier = new InitDataVerifier(ctx.config.messenger);

  /**
   * The HMAC and the Ed25519 check are synchronous (src/messenger/init-data.ts); the counter and the player row are
   * the store's. Order: the address limit, the init data, the refused-check limit (a refusal past it is 429 and
   * writes no counter row), the player's limit, then the player row (src/messenger/abuse-limits.ts).
   */
  async function authenticate(request: Request, query: unknown, body: unknown, readOnly = false): Promise<MessengerRequest> {
    limits.address(request);
    const raw =
      initDataFromHeader(request.headers.get("authorization")) ??
      ((query as { init_data?: string } | undefined)?.init_data || null) ??
      ((body && typeof body === "object" ? (body as { init_data?: string }).init_data : undefined) || null);
    const now = ctx.clock.now();
    let identity: InitDataIdentity;
    try {
      identity = verifier.verify(raw, now.getTime());
    } catch (err) {
      if (err instanceof InitDataError) {
        limits.initDataRefused(request);
        await bump(ctx.store, ctx.clock, "init_data_failures", err.reason);
      }
      throw err;
    }
    limits.player(request, identity.telegramUserId);
    return { identity, player: await (readOnly ? playerToRead : ensurePlayer)(ctx, identity, now) };
  }

  /**
   * Declares `messenger` on the handler's context for TypeScript; at run time the list is empty, so no resolve
   * hook runs. The transform below sets it: an async resolve hook per request cost ~5× the verification itself
   * (measured with bench/messenger.ts), the same finding as the partner plugin's.
   */
  const typed = [] as unknown as [() => { messenger: MessengerRequest }];
  return {
    verifier,
    authenticate,
    plugin: new Elysia({ name: "herald:messenger-identity" }).macro({
      /** true: the player row is made or refreshed; "read-only": read as it stands, never written. */
      messenger: (mode: true | "read-only") => ({
        async transform(context: {
          request: Request;
          query?: unknown;
          body?: unknown;
          messenger?: MessengerRequest;
          set: { headers: Record<string, string | number> };
        }) {
          try {
            context.messenger = await authenticate(context.request, context.query, context.body, mode === "read-only");
          } finally {
            // The X-RateLimit-* headers on a successful answer too (a refusal takes them from the request state).
            Object.assign(context.set.headers, limits.headersOf(context.request));
          }
        },
        resolve: typed,
        detail: { tags: ["messenger"], description: MESSENGER_AUTH_DESCRIPTION, security: [{ MiniAppInitData: [] }, { MiniAppInitDataQuery: [] }] },
      }),
    }),
  };
}

export type MessengerIdentity = ReturnType<typeof messengerIdentity>;
