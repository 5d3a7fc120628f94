import { Elysia } from "elysia";
import type { Guards } from "../auth/guards";
import { redirect } from "../auth/session-plugin";
import type { AppContext } from "../context";
import { configPageRoutes } from "./config-page";
import { CONSOLE_NAV } from "./frame";
import { keysPageRoutes } from "./keys-page";
import { notSignedInDoc } from "./kit";
import { signInRoutes } from "./sign-in-routes";

/**
 * The console's own pages, mounted by app.ts: its door (sign-in, sign-out and the sessions), its address, and the
 * pages about shared rooms, which sit below the console and draw nothing themselves (auth's partner keys, the
 * configuration). Every other page sits beside its area: a domain's in the domain's folder, an ops area's in
 * src/ops/<area>/ (src/ops/routes.ts composes those).
 */
export function consoleRoutes(ctx: AppContext, guards: Guards) {
  return new Elysia({ name: "herald:console-pages" })
    .use(signInRoutes(ctx, guards))
    .use(keysPageRoutes(ctx, guards))
    .use(guards.operator.plugin)
    .get("/admin/console", () => redirect(CONSOLE_NAV[0]![0]), {
      operator: "page",
      detail: {
        summary:
          "The operator console (HTML): 303 to its first page, /admin/ops/readiness; without credentials a browser is sent to /admin/sign-in, a script gets 403",
        responses: {
          303: { description: "Location: /admin/ops/readiness, or /admin/sign-in?next=/admin/console when a browser is not signed in" },
          403: notSignedInDoc("/admin/console")[403],
        },
      },
    })
    .use(configPageRoutes(ctx, guards));
}
