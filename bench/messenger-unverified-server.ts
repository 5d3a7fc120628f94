// The `messenger` benchmark's comparison case: GET /api/messenger/games/catalog doing herald's real work WITHOUT
// init-data verification. The same pieces `herald serve` runs (loadConfig → openContext → the real httpCore →
// requestLog.start → listen) and the route's handler, query and response schemas from src/messenger/routes.ts,
// for one fixed player read the way the identity plugin reads it (getPlayer: one indexed SELECT; an unchanged
// player is never written). So the only thing this server skips, compared with herald, is the verification:
// the header read, the cache lookup or parse + HMAC, and the age check. Keep it in step with src/messenger/routes.ts.
//
//   HERALD_DB_PATH=… BENCH_PLAYER_ID=4242 PORT=… bun bench/messenger-unverified-server.ts   (the harness sets the rest)
import { Elysia } from "elysia";
import { openContext } from "../src/bootstrap";
import { loadConfig } from "../src/config";
import { httpCore, RequestStates } from "../src/http/core";
import { RouteIndex } from "../src/http/route-index";
import { GamesModel, InitQuery } from "../src/messenger/model";
import { getPlayer, getPlayerOrCreate } from "../src/messenger/players";
import { messengerErrors } from "../src/messenger/routes";
import { balancesOf, gameCatalog } from "../src/messenger/service";
import type { AnyElysia } from "elysia";
import { listenUntilSignal } from "./core-server";

const playerId = Number(process.env.BENCH_PLAYER_ID ?? "4242");
const config = loadConfig();
const ctx = openContext(config);
getPlayerOrCreate(ctx.db.sqlite, playerId, ctx.clock.now().toISOString());

const states = new RequestStates();
const routes = new RouteIndex();
// normalize: false and encodeSchema: false, as buildApp (src/app.ts) sets them.
const app = new Elysia({ name: "herald-messenger-unverified-bench", normalize: false, encodeSchema: false }).use(httpCore(ctx, states, routes)).get(
  "/api/messenger/games/catalog",
  () => {
    const player = getPlayer(ctx.db.sqlite, playerId)!;
    return { success: true as const, ...gameCatalog(ctx, player), balances: balancesOf(player) };
  },
  { query: InitQuery, response: { 200: GamesModel.catalog, ...messengerErrors } },
);
routes.load(app.routes);

listenUntilSignal(app as unknown as AnyElysia, ctx, config);
