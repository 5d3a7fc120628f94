import { createHash } from "node:crypto";
import { Elysia, t } from "elysia";
import { conditionalResponse, representation } from "../http/conditional";
import { AppError } from "../http/errors";
import { conditionalGet, sendsHeaders } from "../http/openapi/contract";
import { pageSecurityHeaders, withPageSecurity } from "../http/security-headers";
import { browserBundle } from "./bundle-macro" with { type: "macro" };

// GET /app (MESSENGER_MINI_APP_PATH): the players' mini-app, the page Telegram opens inside the chat (the bot's
// web_app button, MESSENGER_MINI_APP_URL; docs/messenger.md "The mini-app page"). The page is a small HTML frame; its script is
// bundled from src/miniapp/browser/app.ts at build time and embedded in the binary (no CDN), served under a name
// that carries its hash, so a browser keeps it until a deploy changes it. The page calls the mini-app routes with
// the player's init data; it holds no secret and shows nothing until those routes answer.

/** A bundled script under a file name that carries its hash, cached for a year: a deploy changes the name. */
function script(name: string, source: string) {
  const file = `${name}-${createHash("sha256").update(source).digest("hex").slice(0, 16)}.js`;
  return { file, rep: representation(source, "text/javascript; charset=utf-8", "public, max-age=31536000, immutable") };
}
const APP_SCRIPT = script("app", browserBundle("app.ts"));
const FAIRNESS_SCRIPT = script("fairness", browserBundle("fairness.ts"));
const SCRIPTS = new Map([APP_SCRIPT, FAIRNESS_SCRIPT].map((s) => [s.file, s.rep]));

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

// Telegram sets --tg-theme-* on the page's root once its script runs (core.telegram.org/bots/webapps#themeparams);
// each has a fallback for a plain browser, light or dark as the system prefers.
const CSS = `
:root { color-scheme: light dark; --bg: var(--tg-theme-bg-color, #fff); --text: var(--tg-theme-text-color, #1f2328);
  --hint: var(--tg-theme-hint-color, #59636e); --link: var(--tg-theme-link-color, #0969da); --button: var(--tg-theme-button-color, #1f6feb);
  --button-text: var(--tg-theme-button-text-color, #fff); --card: var(--tg-theme-secondary-bg-color, #f6f8fa); --danger: var(--tg-theme-destructive-text-color, #cf222e); }
@media (prefers-color-scheme: dark) { :root { --bg: var(--tg-theme-bg-color, #0d1117); --text: var(--tg-theme-text-color, #e6edf3);
  --hint: var(--tg-theme-hint-color, #9198a1); --card: var(--tg-theme-secondary-bg-color, #161b22); --link: var(--tg-theme-link-color, #4493f8); } }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--text); font: 16px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
main { max-width: 480px; margin: 0 auto; padding: 12px 16px 32px; }
main p, main li { overflow-wrap: anywhere; }
h1 { font-size: 20px; margin: 4px 0 12px; } h2 { font-size: 17px; margin: 20px 0 8px; }
a { color: var(--link); }
.card { background: var(--card); border-radius: 12px; padding: 12px 14px; margin: 10px 0; }
dl.balances { display: grid; grid-template-columns: repeat(3, 1fr); gap: 8px; margin: 0; text-align: center; }
dl.balances dt { color: var(--hint); font-size: 13px; } dl.balances dd { margin: 0; font-size: 22px; font-weight: 600; }
ol.segments { display: grid; grid-template-columns: repeat(2, 1fr); gap: 6px; padding: 0; list-style: none; margin: 8px 0; }
ol.segments li { border: 1px solid var(--hint); border-radius: 8px; padding: 6px 8px; text-align: center; }
ol.segments li.won { background: var(--button); color: var(--button-text); border-color: var(--button); font-weight: 600; }
button { font: inherit; border: 0; border-radius: 10px; padding: 12px 16px; width: 100%; background: var(--button); color: var(--button-text); font-weight: 600; cursor: pointer; }
button:disabled { opacity: .5; cursor: default; }
button:focus-visible, textarea:focus-visible, a:focus-visible { outline: 3px solid var(--link); outline-offset: 2px; }
.hint { color: var(--hint); font-size: 14px; } .mono { font-family: ui-monospace, monospace; font-size: 13px; overflow-wrap: anywhere; }
#error { color: var(--danger); font-weight: 600; }
textarea { width: 100%; min-height: 80px; font: 13px ui-monospace, monospace; border-radius: 8px; padding: 8px; background: var(--bg); color: var(--text); }
ul { padding-left: 20px; }
.board { display: grid; grid-template-columns: repeat(5, 1fr); gap: 6px; margin: 8px 0; }
.board button { padding: 0; aspect-ratio: 1; font-size: 12px; border-radius: 8px; overflow-wrap: anywhere; }
.board button:disabled { opacity: 1; background: var(--card); color: var(--text); border: 1px solid var(--hint); }
button.secondary { background: transparent; color: var(--link); border: 1px solid var(--link); margin-top: 8px; }
#promo-code { width: 100%; font: inherit; padding: 10px; border-radius: 8px; border: 1px solid var(--hint); background: var(--bg); color: var(--text); margin: 6px 0; }
.good { color: #1a7f37; font-weight: 600; } .bad { color: var(--danger); font-weight: 600; }
ul.missions { list-style: none; padding: 0; margin: 0; } li.mission { border-bottom: 1px solid var(--hint); padding: 8px 0; }
li.mission p { margin: 4px 0; } ol.history { padding-left: 20px; font-size: 14px; } ol.history li { margin: 2px 0; } progress { width: 100%; height: 10px; accent-color: var(--button); }
`;

/** The mini-app's page under `base` (MESSENGER_MINI_APP_PATH); the script reads `base` from the root element. */
const appPage = (base: string) => `<!doctype html>
<html lang="en" data-app-base="${base}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
<meta name="robots" content="noindex, nofollow"><title>Games</title><style>${CSS}</style></head>
<body><main>
<h1>Games</h1>
<section class="card" aria-labelledby="balances-title"><h2 id="balances-title" class="hint" style="margin:0 0 6px;font-size:14px">Your balance</h2>
<dl class="balances"><div><dt>Points</dt><dd id="points">–</dd></div><div><dt>Spins</dt><dd id="spins">–</dd></div><div><dt>Missiles</dt><dd id="missiles">–</dd></div></dl></section>
<p id="error" role="alert" hidden></p>
<section id="outside" class="card" hidden><p><strong>Open this page from the bot in Telegram.</strong> Telegram tells the game who you are when it opens the page; in a plain browser there is nobody to play as.</p>
<form id="paste-form"><label for="paste" class="hint">For development: paste init data signed for the bot (Telegram.WebApp.initData)</label><textarea id="paste" autocomplete="off" spellcheck="false"></textarea><button type="submit">Use it</button></form></section>
<div id="game" hidden>
<section class="card" aria-labelledby="wheel-title"><h2 id="wheel-title">Spin wheel</h2>
<ol id="segments" class="segments" aria-label="The wheel's segments"></ol>
<button id="spin" type="button">Spin</button>
<p id="spin-note" class="hint"></p>
<p id="result" aria-live="polite"></p>
<p id="result-fairness" class="hint mono"></p>
<details><summary>Fairness: what the server committed to before your spin</summary>
<p class="hint">The outcome of your next spin is fixed by the server seed whose SHA-256 is below, your client seed and the nonce; the server cannot change it after you spin.</p>
<p>Committed hash: <span id="commitment" class="mono"></span><br>Client seed: <span id="client-seed" class="mono"></span><br>Next nonce: <span id="nonce" class="mono"></span></p>
<p class="hint">To check a spin, reveal the server seed (this starts a new seed pair with a new client seed), then recompute the spin on <a href="${base}/fairness">the check page</a>.</p></details>
<div id="reveal-box" hidden><button id="reveal" type="button">Reveal the seed and check this spin</button><p><a id="check-link" hidden>Check this spin</a></p></div></section>
<section class="card" aria-labelledby="grid-title"><h2 id="grid-title">Recon grid</h2>
<p id="grid-note" class="hint"></p>
<div id="board" class="board" role="group" aria-label="The grid's 25 cells, row by row"></div>
<button id="grid-start" type="button" hidden>Start a grid</button>
<p id="grid-result" aria-live="polite"></p>
<p><a id="grid-check" hidden>Check your last grid</a></p>
<button id="buy-missiles" type="button" class="secondary">Buy 5 missiles (100 points)</button></section>
<section class="card" aria-labelledby="missions-title"><h2 id="missions-title">Missions</h2>
<ul id="missions" class="missions"></ul><p id="missions-none" class="hint" hidden>No missions right now.</p>
<p id="mission-result" role="status"></p></section>
<section class="card" aria-labelledby="promo-title"><h2 id="promo-title">Promo code</h2>
<form id="promo-form"><label for="promo-code" class="hint">A code from the bot, a channel or a friend</label>
<input id="promo-code" autocomplete="off" autocapitalize="off" spellcheck="false" maxlength="48">
<button type="submit">Claim</button></form><p id="promo-result" role="status"></p></section>
<section class="card" aria-labelledby="wallet-title"><h2 id="wallet-title">Your wallet</h2>
<p class="hint">Link a Solana wallet to your account by signing a message with it (no transaction, no fee).</p>
<div id="wallets"></div><p id="wallets-none" class="hint">No Solana wallet was found in this browser: open the game in a browser or app with a wallet (one that follows the Wallet Standard) to link it.</p>
<p id="wallet-result" role="status"></p></section>
<section class="card" aria-labelledby="history-title"><h2 id="history-title">Your history</h2>
<ol id="history" class="history"></ol><p id="history-none" class="hint" hidden>Nothing yet: your plays, purchases and rewards appear here.</p></section>
<section class="card" aria-labelledby="games-title"><h2 id="games-title">On today</h2><ul id="games"></ul>
<h2>Items</h2><ul id="items"></ul></section>
</div>
<noscript><p>This game needs JavaScript.</p></noscript>
</main><script src="${base}/assets/${APP_SCRIPT.file}"></script></body></html>`;

// The fairness check: the form, and where its answer goes. The algorithm is the page's script (browser/fair.ts).
const fairnessPage = (base: string) => `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Check a spin or a grid</title><style>${CSS}
label { display: block; margin: 10px 0 4px; font-weight: 600; } input, select { font: inherit; width: 100%; padding: 8px; border-radius: 8px; border: 1px solid var(--hint); background: var(--bg); color: var(--text); }
.outcome { font-weight: 600; }
ol.grid { display: grid; grid-template-columns: repeat(5, 1fr); gap: 4px; padding: 0; list-style: none; font-size: 12px; }
ol.grid li { border: 1px solid var(--hint); border-radius: 6px; padding: 6px 2px; text-align: center; overflow-wrap: anywhere; }
ol.grid li.prize { background: var(--card); font-weight: 600; }
</style></head>
<body><main>
<h1>Check a spin or a grid</h1>
<p class="hint">Every spin and every grid is fixed by a server seed, your client seed and a nonce. The game shows the SHA-256 of the server seed before you play and reveals the seed afterwards (the wheel: when you change your client seed; the grid: when it ends). Enter them here: this page recomputes the outcome in your browser, and checks the seed against the hash. Nothing you enter is sent anywhere.</p>
<form id="check" class="card">
<label for="game">Game</label><select id="game"><option value="wheel">Spin wheel</option><option value="grid">Recon grid</option></select>
<label for="server-seed">Server seed (revealed)</label><input id="server-seed" autocomplete="off" spellcheck="false" inputmode="text">
<label for="hash">Committed hash (shown before play)</label><input id="hash" autocomplete="off" spellcheck="false">
<label for="client-seed">Client seed</label><input id="client-seed" autocomplete="off" spellcheck="false">
<label for="nonce">Nonce</label><input id="nonce" inputmode="numeric" autocomplete="off" value="0">
<div id="weights-row"><label for="weights">Segment weights, in order</label><input id="weights" autocomplete="off" value="40, 25, 5, 15, 10, 5"></div>
<p></p><button type="submit">Check</button></form>
<section id="result" class="card" aria-live="polite"></section>
<details class="card"><summary>How the outcome is computed</summary>
<p class="hint">hash = hex(SHA-256(server seed as text)). fairInt(n, nonce, cursor): d = hex(HMAC-SHA256(key = server seed, message = "client seed:nonce:cursor")); x = the first 13 hex digits of d as a number; the result is floor(x × n / 2<sup>52</sup>).</p>
<p class="hint">Wheel: r = fairInt(sum of the weights, nonce, 0); the segment is the first whose running total of weights exceeds r. Grid: start from positions 0–24 holding cells 0–24 (cells 0–9 the prizes: 150 points, 50, 50, 20, 20, 20 points, 1 free spin, 1 free spin, 2 missiles, 2 missiles; 10–24 empty); for i from 24 down to 1, swap positions i and fairInt(i + 1, nonce, i).</p>
</details>
<p class="hint"><a href="${base}">Back to the games</a></p>
<noscript><p>This check runs in your browser and needs JavaScript.</p></noscript>
</main><script src="${base}/assets/${FAIRNESS_SCRIPT.file}"></script></body></html>`;

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
  const page = pageRep(appPage(base));
  const fairness = pageRep(fairnessPage(base));
  const detail = { tags: ["messenger"], ...conditionalGet("etag") };
  return new Elysia({ name: "herald:mini-app-page" })
    .get(base, ({ request }) => servePage(request, page), {
      detail: {
        ...detail,
        summary: "The players' mini-app (HTML): balances, the spin wheel with its commitment, what is on today; Telegram opens it from the bot",
        ...sendsHeaders({ "X-Robots-Tag": "noindex, nofollow: the page is for players inside Telegram" }),
        responses: { 200: { description: "text/html", content: { "text/html": { schema: { type: "string" as const } } } } },
      },
    })
    .get(`${base}/fairness`, ({ request }) => servePage(request, fairness), {
      detail: {
        ...detail,
        summary:
          "Check a spin or a grid (HTML): recomputes the outcome in the browser from the revealed server seed, the client seed and the nonce, and checks the seed against the committed hash",
        ...sendsHeaders({ "X-Robots-Tag": "noindex, nofollow: the page is for players" }),
        responses: { 200: { description: "text/html", content: { "text/html": { schema: { type: "string" as const } } } } },
      },
    })
    .get(
      `${base}/assets/:file`,
      ({ request, params }) => {
        const rep = SCRIPTS.get(params.file);
        if (!rep) throw new AppError("not_found", "No such mini-app asset: reload the page");
        return conditionalResponse(request, rep);
      },
      {
        params: t.Object({ file: t.String({ maxLength: 100, description: "app-<hash>.js or fairness-<hash>.js, as the pages name them" }) }),
        detail: {
          ...detail,
          summary: "The mini-app's scripts, each named by its content hash (cached for a year); another name is 404",
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
