// The HTML of the players' mini-app (GET /app) and of its fairness check (GET /app/fairness): frames that the pages'
// scripts fill. Their words are the English catalog's (src/miniapp/browser/messages-en.ts), each element marked
// with its key (data-t) so that the script puts the player's language in its place; a browser without the script
// still reads English. The wheel, the board and the lists are drawn by the script from Herald's answers.
import { escapeHtml as escape } from "../http/formats/html";
import { en, type MessageKey } from "./browser/messages-en";
import { CSS } from "./styles";

/** An element's words and its key: `data-t="key">words`. */
const w = (key: MessageKey) => {
  const m = en[key];
  return `data-t="${key}">${escape(typeof m === "string" ? m : m.other)}`;
};

/** Where each catalog beyond English is (data-messages-<lang>): the script loads the player's, if need be. */
const catalogAttributes = (base: string, catalogs: Record<string, string>) =>
  Object.entries(catalogs)
    .map(([lang, file]) => ` data-messages-${lang}="${base}/assets/${file}"`)
    .join("");

/** The script first (deferred: fetched while the page is parsed, run once it is), then the styles. */
const head = (
  title: MessageKey,
  script: string,
) => `<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
<script src="${script}" defer></script>
<meta name="robots" content="noindex, nofollow"><meta name="color-scheme" content="light dark"><meta name="description" content="Herald's games: the daily wheel and the recon grid">
<title data-t-title="${title}">${escape(en[title] as string)}</title><style>${CSS}</style></head>`;

/** The mini-app's page under `base` (MESSENGER_MINI_APP_PATH); the script reads `base` from the root element. */
export const appPage = (base: string, script: string, catalogs: Record<string, string>) => `<!doctype html>
<html lang="en" data-app-base="${base}"${catalogAttributes(base, catalogs)}>
${head("app.doc_title", `${base}/assets/${script}`)}
<body><div id="app">
<header class="top"><h1 ${w("app.title")}</h1>
<section aria-labelledby="balances-title"><h2 id="balances-title" class="sr-only" ${w("balance.title")}</h2>
<dl class="balances"><div><dt ${w("balance.points")}</dt><dd id="points">–</dd></div><div><dt ${w("balance.spins")}</dt><dd id="spins">–</dd></div><div><dt ${w("balance.missiles")}</dt><dd id="missiles">–</dd></div></dl></section></header>
<main>
<p id="load-msg" class="hint" ${w("load.waiting")}</p>
<p id="load-error" class="msg bad" role="alert" hidden></p>
<section id="outside" class="card" hidden><p><strong ${w("outside.title")}</strong> <span ${w("outside.body")}</span></p>
<form id="paste-form"><label for="paste" class="hint" ${w("outside.paste_label")}</label><textarea id="paste" autocomplete="off" spellcheck="false" maxlength="4096"></textarea><button type="submit" ${w("outside.paste_button")}</button></form></section>
<div id="game" hidden>
<section id="gift" class="card gift" aria-labelledby="gift-title" hidden><h2 id="gift-title" ${w("gift.title")}</h2><p id="gift-body"></p>
<button id="gift-open" type="button" ${w("gift.open")}</button><p id="gift-msg" class="msg" role="status"></p></section>
<section class="card" aria-labelledby="wheel-title"><h2 id="wheel-title" ${w("wheel.title")}</h2>
<div class="wheel"><svg id="wheel" viewBox="-116 -116 232 232" role="img" aria-label="${escape(en["wheel.title"])}"></svg></div>
<p id="spin-note" class="note"></p>
<button id="spin" type="button" aria-describedby="spin-note" ${w("wheel.spin")}</button>
<button id="buy-spin" type="button" class="secondary" aria-describedby="spin-note" hidden></button>
<p id="wheel-msg" class="msg" role="status"></p>
<details id="odds"><summary ${w("wheel.odds_title")}</summary><ul id="odds-list" class="odds"></ul></details>
<details><summary ${w("wheel.fair_title")}</summary>
<p class="hint" ${w("wheel.fair_body")}</p>
<p><span ${w("wheel.commitment")}</span>: <span id="commitment" class="mono"></span><br><span ${w("wheel.client_seed")}</span>: <span id="client-seed" class="mono"></span><br><span ${w("wheel.nonce")}</span>: <span id="nonce" class="mono"></span></p>
<p class="hint"><span ${w("wheel.fair_how")}</span> <a href="${base}/fairness" ${w("wheel.check_page")}</a></p></details>
<div id="reveal-box" hidden><button id="reveal" type="button" class="secondary" ${w("wheel.reveal")}</button><p><a id="check-link" hidden ${w("wheel.check_link")}</a></p></div></section>
<section class="card" aria-labelledby="grid-title"><h2 id="grid-title" ${w("grid.title")}</h2>
<p id="grid-note" class="note"></p>
<div id="board" class="board" role="group" aria-labelledby="grid-title"></div>
<button id="grid-start" type="button" hidden ${w("grid.start")}</button>
<p id="grid-msg" class="msg" role="status"></p>
<div><button id="buy-1" type="button" class="secondary" aria-describedby="grid-note" hidden></button><button id="buy-5" type="button" class="secondary" aria-describedby="grid-note" hidden></button></div>
<p><a id="grid-check" hidden ${w("grid.check")}</a></p></section>
<section class="card" aria-labelledby="missions-title"><h2 id="missions-title" ${w("missions.title")}</h2>
<ul id="missions" class="missions"></ul><p id="missions-none" class="hint" hidden ${w("missions.none")}</p></section>
<section class="card" aria-labelledby="promo-title"><h2 id="promo-title" ${w("promo.title")}</h2>
<form id="promo-form"><label for="promo-code" class="hint" ${w("promo.label")}</label>
<input id="promo-code" autocomplete="off" autocapitalize="off" spellcheck="false" maxlength="48" aria-describedby="promo-msg">
<button type="submit" id="promo-claim" ${w("promo.claim")}</button></form><p id="promo-msg" class="msg" role="status"></p></section>
<section class="card" aria-labelledby="history-title"><h2 id="history-title" ${w("history.title")}</h2>
<ol id="history" class="history"></ol><p id="history-none" class="hint" hidden ${w("history.none")}</p></section>
<section class="card" aria-labelledby="wallet-title"><h2 id="wallet-title" ${w("wallet.title")}</h2>
<p class="hint" ${w("wallet.about")}</p>
<div id="wallets"></div><p id="wallets-none" class="hint" ${w("wallet.none")}</p>
<p id="wallet-msg" class="msg" role="status"></p></section>
</div>
<noscript><p ${w("app.noscript")}</p></noscript>
</main></div></body></html>`;

/** The fairness check: the verdict first (above the fold), its details, then the form and how it is computed. */
export const fairnessPage = (base: string, script: string, catalogs: Record<string, string>) => `<!doctype html>
<html lang="en"${catalogAttributes(base, catalogs)}>
${head("fair.doc_title", `${base}/assets/${script}`)}
<body><div id="app"><main>
<h1 ${w("fair.title")}</h1>
<section id="result" class="card" aria-live="polite"><p class="hint" ${w("fair.intro")}</p><p class="hint" ${w("fair.waiting")}</p></section>
<section id="details"></section>
<form id="check" class="card"><h2 ${w("fair.form")}</h2>
<label for="game" ${w("fair.game")}</label><select id="game"><option value="wheel" ${w("fair.wheel")}</option><option value="grid" ${w("fair.grid")}</option></select>
<label for="server-seed" ${w("fair.server_seed")}</label><input id="server-seed" autocomplete="off" spellcheck="false" maxlength="64">
<label for="hash" ${w("fair.hash")}</label><input id="hash" autocomplete="off" spellcheck="false" maxlength="64">
<label for="client-seed" ${w("fair.client_seed")}</label><input id="client-seed" autocomplete="off" spellcheck="false" maxlength="200">
<label for="nonce" ${w("fair.nonce")}</label><input id="nonce" inputmode="numeric" autocomplete="off" maxlength="16" value="0">
<div id="weights-row"><label for="weights" ${w("fair.weights")}</label><input id="weights" autocomplete="off" maxlength="800" value="40, 25, 5, 15, 10, 5"></div>
<div id="labels-row"><label for="labels" ${w("fair.labels")}</label><input id="labels" autocomplete="off" maxlength="2000" value="10 points | 25 points | 100 points | 2 missiles | Free spin | Try again"></div>
<p></p><button type="submit" ${w("fair.check")}</button></form>
<details class="card"><summary ${w("fair.how")}</summary>
<p class="hint" ${w("fair.intro")}</p><p class="hint" ${w("fair.how_hash")}</p><p class="hint" ${w("fair.how_wheel")}</p><p class="hint" ${w("fair.how_grid")}</p></details>
<p><a id="back" href="${base}" ${w("fair.back")}</a></p>
<noscript><p ${w("fair.noscript")}</p></noscript>
</main></div></body></html>`;
