import { Elysia } from "elysia";
import type { Guards } from "../auth/guards";
import type { AppContext } from "../context";
import { keysPageRoutes } from "./keys-page";
import { signInRoutes } from "./sign-in-routes";

/**
 * The console's own pages, mounted by app.ts: its door (sign-in, sign-out and the sessions) and the page over a
 * shared room, which draws nothing itself (auth's partner keys). A domain's or an ops area's pages sit beside it.
 */
export function consoleRoutes(ctx: AppContext, guards: Guards) {
  return (
    new Elysia({ name: "herald:console-pages" })
      // Operator sign-in, sign-out and sessions: the door to every console page, on every engine.
      .use(signInRoutes(ctx, guards))
      // The console page over the partner keys (list, disable, rotate from the browser); their JSON routes are auth's.
      .use(keysPageRoutes(ctx, guards))
  );
}
