// What the page sends to Herald and reads back, as the messenger's routes declare it, as types only: the bundle
// carries none of the server's code, and a field no route declares, or a body a route would refuse, fails to compile
// (`tsc -p src/miniapp/browser`). test/miniapp/wire.test.ts holds each line of Routes to the mounted schemas.
import type { Static, TSchema } from "elysia";
import type { MissionModel, PromoModel } from "../../messenger/games/promos-model";
import type {
  Balances as BalancesSchema,
  EngagementModel,
  GamesModel,
  GridModel,
  InitOnlyBody,
  Reward as RewardSchema,
  WalletModel,
} from "../../messenger/model";

/** A route the page calls: the body it sends (none: a GET, its query in the path) and the answer it reads. */
interface Call<Body extends TSchema | null, Answer extends TSchema> {
  body: Body extends TSchema ? Static<Body> : undefined;
  answer: Static<Answer>;
}

// The table test/miniapp/wire.test.ts reads: one line a route, `"<path>": Call<typeof <body>, typeof <answer>>`.
export interface Routes {
  "/api/messenger/games/catalog": Call<typeof InitOnlyBody, typeof GamesModel.catalog>;
  "/api/messenger/games/spin-wheel/status": Call<typeof GamesModel.wheelStatusBody, typeof GamesModel.wheelStatus>;
  "/api/messenger/games/spin-wheel/play": Call<typeof GamesModel.playBody, typeof GamesModel.play>;
  "/api/messenger/games/items/purchase": Call<typeof GamesModel.purchaseBody, typeof GamesModel.purchase>;
  "/api/messenger/games/welcome-gift/open": Call<typeof InitOnlyBody, typeof GamesModel.welcomeGift>;
  "/api/messenger/games/recon-grid/status": Call<typeof InitOnlyBody, typeof GridModel.status>;
  "/api/messenger/games/recon-grid/start": Call<typeof GridModel.startBody, typeof GridModel.started>;
  "/api/messenger/games/recon-grid/reveal": Call<typeof GridModel.revealBody, typeof GridModel.revealed>;
  "/api/messenger/games/recon-grid/purchase": Call<typeof GridModel.purchaseBody, typeof GamesModel.purchase>;
  "/api/messenger/games/promos/claim": Call<typeof PromoModel.claimBody, typeof PromoModel.claimed>;
  "/api/messenger/missions/catalog": Call<typeof InitOnlyBody, typeof MissionModel.catalog>;
  "/api/messenger/missions/enroll": Call<typeof MissionModel.enrollBody, typeof MissionModel.enrolled>;
  "/api/messenger/missions/progress": Call<typeof MissionModel.progressBody, typeof MissionModel.progress>;
  "/api/messenger/wallet-proof/challenge": Call<typeof WalletModel.challengeBody, typeof WalletModel.challenge>;
  "/api/messenger/wallet-claim/verify": Call<typeof WalletModel.verifyBody, typeof WalletModel.verified>;
  [history: `/api/messenger/engagement/activity-preview?limit=${number}`]: Call<null, typeof EngagementModel.activity>;
}

export type Path = keyof Routes;
/** The body a route takes, as `api()`'s rest argument: none for a GET. */
export type BodyOf<P extends Path> = Routes[P]["body"] extends undefined ? [] : [body: Routes[P]["body"]];
export type AnswerOf<P extends Path> = Routes[P]["answer"];

export type Balances = Static<typeof BalancesSchema>;
export type Reward = Static<typeof RewardSchema>;
export type Catalog = AnswerOf<"/api/messenger/games/catalog">;
export type WheelStatus = AnswerOf<"/api/messenger/games/spin-wheel/status">;
export type Segment = WheelStatus["campaign"]["segments"][number];
export type GridStatus = AnswerOf<"/api/messenger/games/recon-grid/status">;
export type GridView = AnswerOf<"/api/messenger/games/recon-grid/reveal">["grid"];
export type Mission = AnswerOf<"/api/messenger/missions/catalog">["missions"][number];
export type Activity = AnswerOf<`/api/messenger/engagement/activity-preview?limit=${number}`>;
