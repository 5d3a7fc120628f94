import { createHash } from "node:crypto";
import { Elysia, t } from "elysia";
import { conditionalResponse, representation } from "../http/caching/conditional";
import { AppError } from "../http/errors/errors";
import { conditionalGet, sendsHeaders } from "../http/openapi/contract";
import { pageSecurityHeaders, withPageSecurity } from "../http/security-headers";
import { appPage, fairnessPage } from "./app-page";
import { browserBundle } from "./bundle-macro" with { type: "macro" };

// GET /app (MESSENGER_MINI_APP_PATH): the players' mini-app, the page Telegram opens inside the chat
// (docs/messenger.md "The mini-app page"). A small HTML frame (app-page.ts) and its script, bundled at build time
// into the binary (no CDN) and served under a name that carries its hash, so a browser keeps it until a deploy.
// The page holds no secret and shows nothing until the mini-app routes answer the player's init data.

/** A bundled script under a file name that carries its hash, cached for a year: a deploy changes the name. */
function script(name: string, source: string) {
  const file = `${name}-${createHash("sha256").update(source).digest("hex").slice(0, 16)}.js`;
  return { file, rep: representation(source, "text/javascript; charset=utf-8", "public, max-age=31536000, immutable") };
}
const APP_SCRIPT = script("app", browserBundle("app.ts"));
const FAIRNESS_SCRIPT = script("fairness", browserBundle("fairness.ts"));
/** The catalogs beyond English, each loaded by the pages only for a player who speaks it (browser/messages.ts). */
const CATALOG_SCRIPTS = { ru: script("messages-ru", browserBundle("catalog-ru.ts")) };
const SCRIPTS = new Map([APP_SCRIPT, FAIRNESS_SCRIPT, ...Object.values(CATALOG_SCRIPTS)].map((s) => [s.file, s.rep]));
const catalogFiles = Object.fromEntries(Object.entries(CATALOG_SCRIPTS).map(([lang, s]) => [lang, s.file]));

/**
 * Only Herald's own script, and Telegram's (telegram-web-app.js, loaded only when Telegram opened the page); calls
 * to Herald only. Telegram's web clients show a mini-app in a frame of theirs: web.telegram.org may frame it, no
 * other site (the app clients use a web view, not a frame).
 */
const PAGE_HEADERS = pageSecurityHeaders({
  scripts: ["'self'", "https://telegram.org"],
  connect: ["'self'"],
  framedBy: ["https://web.telegram.org"],
  referrer: "no-referrer",
});

/** An HTML page that revalidates on every open (a cheap 304). */
const pageRep = (html: string) => {
  const rep = representation(html, "text/html; charset=utf-8", "no-cache");
  return { ...rep, headers: { ...rep.headers, "x-robots-tag": "noindex, nofollow" } };
};

/** A page, or its 304; the page's policies go with its body (a 304 keeps the cached answer's, RFC 9111 §4.3.4). */
function servePage(request: Request, rep: ReturnType<typeof pageRep>): Response {
  const res = conditionalResponse(request, rep);
  return res.status === 200 ? withPageSecurity(res, PAGE_HEADERS) : res;
}

/** The mini-app's pages under `base` (MESSENGER_MINI_APP_PATH, default /app): the page, its fairness check, their scripts. */
export function miniAppPageRoutes(base: string) {
  const page = pageRep(appPage(base, APP_SCRIPT.file, catalogFiles));
  const fairness = pageRep(fairnessPage(base, FAIRNESS_SCRIPT.file, catalogFiles));
  const detail = { tags: ["messenger"], ...conditionalGet("etag") };
  const pageDoc = (summary: string, robots: string) => ({
    ...detail,
    summary,
    ...sendsHeaders({ "X-Robots-Tag": robots }),
    responses: { 200: { description: "text/html", content: { "text/html": { schema: { type: "string" as const } } } } },
  });
  return new Elysia({ name: "herald:mini-app-page" })
    .get(base, ({ request }) => servePage(request, page), {
      detail: pageDoc(
        "The players' mini-app (HTML): balances, the spin wheel with its commitment, what is on today; Telegram opens it from the bot",
        "noindex, nofollow: the page is for players inside Telegram",
      ),
    })
    .get(`${base}/fairness`, ({ request }) => servePage(request, fairness), {
      detail: pageDoc(
        "Check a spin or a grid (HTML): recomputes the outcome in the browser from the revealed server seed, the client seed and the nonce, and checks the seed against the committed hash",
        "noindex, nofollow: the page is for players",
      ),
    })
    .get(
      `${base}/assets/:file`,
      ({ request, params }) => {
        const rep = SCRIPTS.get(params.file);
        if (!rep) throw new AppError("not_found", "No such mini-app asset: reload the page");
        return conditionalResponse(request, rep);
      },
      {
        params: t.Object({
          file: t.String({ maxLength: 100, description: "app-<hash>.js, fairness-<hash>.js or messages-<lang>-<hash>.js, as the pages name them" }),
        }),
        detail: {
          ...detail,
          summary:
            "The mini-app's scripts (the pages' and their catalogs beyond English), each named by its content hash (cached for a year); another name is 404",
          responses: {
            200: { description: "text/javascript", content: { "text/javascript": { schema: { type: "string" as const } } } },
            404: {
              description: "Not the script this build embeds (a page from before a deploy): not_found; reloading the page names the current one",
              content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
            },
          },
        },
      },
    );
}
