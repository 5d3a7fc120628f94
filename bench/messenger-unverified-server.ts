// The `messenger` benchmark's comparison server: the whole herald app (buildApp, the real HTTP core, every route
// and hook, the jobs running as under `herald serve`) plus ONE extra route, GET /bench/messenger/games/catalog,
// that does the catalog route's work WITHOUT init-data verification: the same handler body, query and response
// schemas as src/messenger/routes.ts, for one fixed player read the way the identity plugin reads it
// (getPlayer: one indexed SELECT). Both cases of the comparison — the real, verified
// GET /api/messenger/games/catalog and this route — are measured against this one process, alternately, so the
// request log, the database, the route table and the jobs are the same for both; the difference is the
// verification alone (the header read, the cache lookup or parse + HMAC, the age check, the macro's hook).
// Keep the handler in step with src/messenger/routes.ts.
//
//   HERALD_DB_PATH=… (or DATABASE_URL=…) BENCH_PLAYER_ID=4242 PORT=… bun bench/messenger-unverified-server.ts   (the harness sets the rest)
import type { AnyElysia } from "elysia";
import { buildApp } from "../src/app";
import { openContextAsync } from "../src/bootstrap";
import { loadConfig } from "../src/config";
import { applyHookScopes } from "../src/http/hook-scope";
import { GamesModel, InitQuery } from "../src/messenger/model";
import { getPlayer, getPlayerOrCreate } from "../src/messenger/players";
import { messengerErrors } from "../src/messenger/route-common";
import { balancesOf, gameCatalog } from "../src/messenger/service";
import { welcomeGiftView } from "../src/messenger/games/welcome-gift";
import { listenUntilSignal } from "./core-server";

/** bench/messenger.ts measures this path. */
const UNVERIFIED_PATH = "/bench/messenger/games/catalog";

const playerId = Number(process.env.BENCH_PLAYER_ID ?? "4242");
const config = loadConfig();
const ctx = await openContextAsync(config);
await getPlayerOrCreate(ctx.store, playerId, ctx.clock.now().toISOString());

const app = buildApp(ctx).get(
  UNVERIFIED_PATH,
  async () => {
    const player = (await getPlayer(ctx.store, playerId))!;
    return {
      success: true as const,
      ...(await gameCatalog(ctx, player)),
      welcome_gift: await welcomeGiftView(ctx.store, player, ctx.clock.now()),
      balances: balancesOf(player),
    };
  },
  { query: InitQuery, response: { 200: GamesModel.catalog, ...messengerErrors } },
);
// buildApp scoped the global hooks before this route existed: scope them again, so that it carries what the
// verified catalog route carries and no more (the probes' and bodies' hooks off; src/http/hook-scope.ts).
applyHookScopes(app.router.history as never);
if (config.jobsEnabled) ctx.jobs.start();
listenUntilSignal(app as unknown as AnyElysia, ctx, config);
