// `messenger: true` on a route: the caller proves who they are with Telegram init data, sent as
// `Authorization: tma <init data>` (Telegram's documented form), the `init_data` query parameter, or the
// `init_data` body field — first found in that order. The player row is resolved (created on first contact), except
// on a read-only route (`messenger: "read-only"`, the previews), which writes nothing (players.ts, playerToRead).
import { Elysia } from "elysia";
import type { AppContext } from "../context";
import type { MessengerLimits } from "./abuse-limits";
import { bump } from "./counters";
import { InitDataError, InitDataVerifier, initDataFromHeader, type InitDataIdentity } from "./init-data";
import { ensurePlayer, KnownPlayers, type PlayerRow, playerToRead } from "./players";

export interface MessengerRequest {
  identity: InitDataIdentity;
  player: PlayerRow;
}

/** `messengerId: true`: who the caller is; the player's row is made or refreshed, not read (KnownPlayers). */
export interface MessengerCaller {
  identity: InitDataIdentity;
  telegramUserId: number;
}

export const MESSENGER_AUTH_DESCRIPTION =
  "Messenger mini-app route: Telegram init data as `Authorization: tma <init data>`, the init_data query parameter or the init_data body field.";

export function messengerIdentity(ctx: AppContext, limits: MessengerLimits) {
  const verifier = new InitDataVerifier(ctx.config.messenger);
  const known = new KnownPlayers();

  /**
   * The HMAC and the Ed25519 check are synchronous (src/messenger/init-data.ts); the counter and the player row are
   * the store's. Order: the address limit, the init data, the refused-check limit (a refusal past it is 429 and
   * writes no counter row), the player's limit, then the player row (src/messenger/abuse-limits.ts).
   */
  async function verified(request: Request, query: unknown, body: unknown): Promise<{ identity: InitDataIdentity; now: Date }> {
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
    return { identity, now };
  }

  async function authenticate(request: Request, query: unknown, body: unknown, readOnly = false): Promise<MessengerRequest> {
    const { identity, now } = await verified(request, query, body);
    if (readOnly) return { identity, player: await playerToRead(ctx, identity, now) };
    const player = await ensurePlayer(ctx, identity, now);
    known.remember(player);
    return { identity, player };
  }

  /** The caller of a route that needs only the player's id: no read of the row while this instance knows it unchanged. */
  async function caller(request: Request, query: unknown, body: unknown): Promise<MessengerCaller> {
    const { identity, now } = await verified(request, query, body);
    await known.ensure(ctx, identity, now);
    return { identity, telegramUserId: identity.telegramUserId };
  }

  /**
   * Declares `messenger` on the handler's context for TypeScript; at run time the list is empty, so no resolve
   * hook runs. The transform below sets it: an async resolve hook per request cost ~5× the verification itself
   * (measured with bench/messenger.ts), the same finding as the partner plugin's.
   */
  const typed = [] as unknown as [() => { messenger: MessengerRequest }];
  const typedCaller = [] as unknown as [() => { messengerId: MessengerCaller }];
  const detail = (): { tags: string[]; description: string; security: Array<Record<string, string[]>> } => ({
    tags: ["messenger"],
    description: MESSENGER_AUTH_DESCRIPTION,
    security: [{ MiniAppInitData: [] }, { MiniAppInitDataQuery: [] }],
  });
  interface Context {
    request: Request;
    query?: unknown;
    body?: unknown;
    messenger?: MessengerRequest;
    messengerId?: MessengerCaller;
    set: { headers: Record<string, string | number> };
  }
  /** Runs the identity step; the X-RateLimit-* headers go on a successful answer too (a refusal takes them from the request state). */
  async function identify(context: Context, step: () => Promise<void>): Promise<void> {
    try {
      await step();
    } finally {
      Object.assign(context.set.headers, limits.headersOf(context.request));
    }
  }
  return {
    verifier,
    authenticate,
    plugin: new Elysia({ name: "herald:messenger-identity" }).macro({
      /** true: the player row is made or refreshed; "read-only": read as it stands, never written. */
      messenger: (mode: true | "read-only") => ({
        transform: (context: Context) =>
          identify(context, async () => {
            context.messenger = await authenticate(context.request, context.query, context.body, mode === "read-only");
          }),
        resolve: typed,
        detail: detail(),
      }),
      /**
       * true: the caller's id for a route whose own transaction locks the player's row, or that reads by id — the row
       * is made or refreshed as with `messenger: true`, and not read again while this instance knows it unchanged.
       */
      messengerId: (_on: true) => ({
        transform: (context: Context) =>
          identify(context, async () => {
            context.messengerId = await caller(context.request, context.query, context.body);
          }),
        resolve: typedCaller,
        detail: detail(),
      }),
    }),
  };
}

export type MessengerIdentity = ReturnType<typeof messengerIdentity>;
