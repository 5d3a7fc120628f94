import { bodyChecks } from "../http/openapi/contract";
import { Elysia } from "elysia";
import type { Guards } from "../auth/guards";
import type { AppContext } from "../context";
import type { RequestStates } from "../http/core";
import { messengerLimits } from "./abuse-limits";
import { botUsernameOf } from "./bot/username";
import { WEBHOOK_SECRET_HEADER, WEBHOOK_SECRET_HEADER_SPEC } from "./bot/webhook";
import { messengerIdentity } from "./identity-plugin";
import { EngagementModel as EM, PlayerLinkModel, GamesModel as G, GridModel, WalletModel, InitOnlyBody, InitQuery, MessengerModel as M } from "./model";
import { WebhookModel } from "./bot/webhook-model";
import { MAX_ENROLLMENTS_PAGE, MissionModel as MM, PromoModel } from "./games/promos-model";
import {
  activityPreview,
  linkPlayer,
  balancesOf,
  claimPromo,
  leaderboardPreview,
  opsHealth,
  issueChallenge,
  verifyClaim,
  enroll,
  listEnrollments,
  missionCatalog,
  missionHistory,
  reportProgress,
  gameCatalog,
  handleUpdate,
  identityStatus,
  webhookSecretInvalid,
  webhookSecretMatches,
  playWheel,
  gridStatus,
  purchaseItem,
  revealCell,
  revealedSeeds,
  startGrid,
  wheelStatus,
  openWelcomeGift,
  welcomeGiftView,
  type TelegramUpdate,
} from "./service";
import { answers, ok, requireMessengerBot } from "./route-common";
import type { PlayerRow } from "./players";

/** The messenger (Telegram) mini-app API: docs/messenger.md. Every route answers 503 without MESSENGER_BOT_TOKEN. */
export function messengerRoutes(ctx: AppContext, guards: Guards, states: RequestStates) {
  const limits = messengerLimits(ctx, states);
  const identity = messengerIdentity(ctx, limits);
  const botUsername = botUsernameOf(ctx);
  const catalog = async (player: PlayerRow) =>
    ok({ ...(await gameCatalog(ctx, player)), welcome_gift: await welcomeGiftView(ctx.store, player, ctx.clock.now()), balances: balancesOf(player) });
  return (
    new Elysia({ name: "herald:messenger" })
      .use(identity.plugin)
      .post("/api/messenger/init/verify", ({ messenger }) => ok(identityStatus(ctx, messenger)), {
        messenger: true,
        body: InitOnlyBody,
        ...answers(M.verified, "Verify init data; the player's identity, link and balances"),
      })
      // Telegram retries an update until it gets a 2xx: the answer is immediate, replies leave through the outbox.
      .post("/api/messenger/webhook", async ({ body }) => ok(await handleUpdate(ctx, botUsername, body as TelegramUpdate)), {
        transform: ({ request }) => {
          // The credential first: a post without the secret is 401 even on a service without a bot token.
          if (!webhookSecretMatches(ctx, request.headers)) {
            limits.webhookRefused(request);
            throw webhookSecretInvalid();
          }
          requireMessengerBot(ctx)();
        },
        headers: WebhookModel.headers,
        body: WebhookModel.update,
        ...answers(WebhookModel.ack, `Bot webhook: Telegram updates; ${WEBHOOK_SECRET_HEADER}; update_id replay suppression; private-chat commands only`, {
          // Either header carries the secret: Telegram's, or the spec's name for it.
          security: [{ BotWebhookSecret: [] }, { MessengerBotWebhookSecret: [] }] as Array<Record<string, string[]>>,
          description:
            `Telegram POSTs each Update as JSON with the secret_token given to setWebhook in ${WEBHOOK_SECRET_HEADER} (${WEBHOOK_SECRET_HEADER_SPEC}, ` +
            "the spec's name, is read too). Commands in private chats are answered; group, supergroup and channel updates and commands for " +
            "another bot (/cmd@OtherBot) are acknowledged and recorded, never answered. Posts without the right secret are 401, and 429 past " +
            "MESSENGER_RATE_LIMIT_WEBHOOK_UNAUTHORIZED_PER_MIN per address; Telegram's own posts are never rate limited.",
        }),
      })
      .get("/api/messenger/games/catalog", ({ messenger: m }) => catalog(m.player), {
        messenger: true,
        query: InitQuery,
        ...answers(G.catalog, "The launchable games and items for this player (init_data in the query)"),
      })
      .post("/api/messenger/games/catalog", ({ messenger: m }) => catalog(m.player), {
        messenger: true,
        body: InitOnlyBody,
        ...answers(G.catalog, "The launchable games and items for this player (init_data in the body)"),
      })
      .post(
        "/api/messenger/games/spin-wheel/status",
        async ({ messenger: m, body }) =>
          ok({
            ...(await wheelStatus(ctx, m.player, body.client_seed, body.next_server_seed_hash)),
            revealed_seeds: await revealedSeeds(ctx, m.player.telegram_user_id, 10),
          }),
        {
          messenger: true,
          body: G.wheelStatusBody,
          ...answers(
            G.wheelStatus,
            "Spin wheel availability, cooldown, campaign, the seed commitment and the next seed's hash; client_seed activates the pre-committed next seed",
          ),
        },
      )
      .post("/api/messenger/games/spin-wheel/play", async ({ messengerId: m, body }) => ok(await playWheel(ctx, m.telegramUserId, body.request_id)), {
        messengerId: true,
        body: G.playBody,
        ...answers(G.play, "Spin: uses the daily free spin or one spin in hand, draws a segment, credits its reward"),
      })
      .post(
        "/api/messenger/games/items/purchase",
        async ({ messengerId: m, body }) => ok(await purchaseItem(ctx, m.telegramUserId, { ...body, quantity: body.quantity ?? 1 })),
        { messengerId: true, body: G.purchaseBody, ...answers(G.purchase, "Buy spin plays or missiles with game points") },
      )
      .post("/api/messenger/games/welcome-gift/open", async ({ messengerId: m }) => ok(await openWelcomeGift(ctx, m.telegramUserId)), {
        messengerId: true,
        body: InitOnlyBody,
        ...answers(G.welcomeGift, "Open the welcome gift (once per player, in their first days); again: the first answer, replayed"),
      })
      .post("/api/messenger/games/recon-grid/status", async ({ messengerId: m }) => ok(await gridStatus(ctx, m.telegramUserId)), {
        messengerId: true,
        body: InitOnlyBody,
        ...answers(GridModel.status, "Recon grid: the active grid (revealed cells only), the last ended grid with its seed, balances"),
      })
      .post("/api/messenger/games/recon-grid/start", async ({ messengerId: m, body }) => ok(await startGrid(ctx, m.telegramUserId, body)), {
        messengerId: true,
        body: GridModel.startBody,
        ...answers(GridModel.started, "Start a grid on the server seed committed before (status's next_server_seed_hash); commits the next one"),
      })
      .post("/api/messenger/games/recon-grid/reveal", async ({ messengerId: m, body }) => ok(await revealCell(ctx, m.telegramUserId, body)), {
        messengerId: true,
        body: GridModel.revealBody,
        ...answers(GridModel.revealed, "Reveal a cell for one missile; credits its reward"),
      })
      .post(
        "/api/messenger/games/recon-grid/purchase",
        async ({ messengerId: m, body }) =>
          ok(await purchaseItem(ctx, m.telegramUserId, { request_id: body.request_id, item_key: "missile", quantity: body.quantity }, "recon_grid.purchase")),
        { messengerId: true, body: GridModel.purchaseBody, ...answers(G.purchase, "Buy missiles with game points") },
      )
      .post("/api/messenger/games/promos/claim", async ({ messengerId: m, body }) => ok(await claimPromo(ctx, m.telegramUserId, body)), {
        messengerId: true,
        body: PromoModel.claimBody,
        ...answers(PromoModel.claimed, "Claim a one-time promo code (once per player, total cap, expiry, audience group)"),
      })
      .post("/api/messenger/missions/catalog", async ({ messengerId: m }) => ok(await missionCatalog(ctx, m.telegramUserId)), {
        messengerId: true,
        body: InitOnlyBody,
        ...answers(MM.catalog, "Active missions with this player's enrollment"),
      })
      .post("/api/messenger/missions/enroll", async ({ messengerId: m, body }) => ok(await enroll(ctx, m.telegramUserId, body.mission_key)), {
        messengerId: true,
        body: MM.enrollBody,
        ...answers(MM.enrolled, "Enroll in a mission (idempotent)"),
      })
      .post("/api/messenger/missions/progress", async ({ messengerId: m, body }) => ok(await reportProgress(ctx, m.telegramUserId, body)), {
        messengerId: true,
        body: MM.progressBody,
        ...answers(
          MM.progress,
          "Mission progress: server missions move to the server's own count, self-reported ones to the reported progress; replay suppression, rate and daily caps",
        ),
      })
      .post(
        "/api/messenger/missions/history",
        async ({ messengerId: m, body }) => ok(await missionHistory(ctx, m.telegramUserId, body.mission_key, body.limit ?? 50, body.offset ?? 0)),
        { messengerId: true, body: MM.historyBody, ...answers(MM.history, "This player's progress events, accepted and refused, newest first") },
      )
      .post(
        "/api/messenger/missions/list",
        async ({ messengerId: m, body }) => ok(await listEnrollments(ctx, m.telegramUserId, body.limit ?? MAX_ENROLLMENTS_PAGE, body.offset ?? 0)),
        { messengerId: true, body: MM.listBody, ...answers(MM.listResult, "This player's enrollments and their progress") },
      )
      .post("/api/messenger/wallet-proof/challenge", async ({ messengerId: m, body }) => ok(await issueChallenge(ctx, m.telegramUserId, body.address)), {
        messengerId: true,
        body: WalletModel.challengeBody,
        ...answers(
          WalletModel.challenge,
          "Wallet proof: a single-use nonce in a Sign-In-With-Solana message",
          // issueChallenge refuses an address that does not decode from base58: its characters are base58's.
          bodyChecks({ address: { pattern: "^[1-9A-HJ-NP-Za-km-z]+$" } }),
        ),
      })
      .post("/api/messenger/wallet-claim/verify", async ({ messengerId: m, body }) => ok(await verifyClaim(ctx, m.telegramUserId, body)), {
        messengerId: true,
        body: WalletModel.verifyBody,
        ...answers(WalletModel.verified, "Wallet proof: check the Ed25519 signature, consume the nonce, link the wallet"),
      })
      .get(
        "/api/messenger/engagement/activity-preview",
        async ({ messenger: m, query }) => ok({ ...(await activityPreview(ctx, m.player, query.limit ?? 20)), balances: balancesOf(m.player) }),
        {
          messenger: "read-only",
          query: EM.activityQuery,
          ...answers(EM.activity, "This player's totals and recent ledger activity (read-only)"),
        },
      )
      .get("/api/messenger/engagement/leaderboard-preview", async ({ messenger: m, query }) => ok(await leaderboardPreview(ctx, m.player, query.limit ?? 10)), {
        messenger: "read-only",
        query: EM.leaderboardQuery,
        ...answers(EM.leaderboard, "Top players by points earned and this player's rank (read-only)"),
      })
      .use(guards.admin.plugin)
      .onBeforeHandle(requireMessengerBot(ctx))
      .get("/api/messenger/ops/health", async ({ query }) => ok(await opsHealth(ctx, query.hours ?? 24, query.limit ?? 20)), {
        admin: true,
        query: EM.healthQuery,
        ...answers(EM.health, "Messenger telemetry: updates, replays, init-data failures, plays, outbox backlog, Bot API errors"),
      })
      // GET and POST /api/messenger/admin/games/promos: src/messenger/admin/games-config-routes.ts.
      .post(
        "/api/messenger/admin/players/:telegram_user_id/link",
        async ({ admin, params, body }) => ok(await linkPlayer(ctx, admin, params.telegram_user_id, body)),
        {
          admin: true,
          params: PlayerLinkModel.params,
          body: PlayerLinkModel.body,
          ...answers(PlayerLinkModel.linked, "Link a player to a MESSENGER_SALUTES_PARTNER user, or unlink (operator; audited)"),
        },
      )
  );
}
