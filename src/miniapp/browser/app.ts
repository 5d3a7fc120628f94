// The players' mini-app (GET /app), in the browser: the balances and what is on today here; the wheel, the grid, the
// missions and promo codes, the history and the wallet in their own modules beside this one. Telegram opens this page
// inside the chat with the player's init data; every call sends it as `Authorization: tma <init data>`
// (docs/messenger.md). Outside Telegram the page says so and takes init data pasted by hand (development). Plain DOM,
// no framework: the whole script stays a few kilobytes (src/miniapp/page.ts serves it; test/miniapp/ drives it).

interface TelegramWebApp {
  initData?: string;
  colorScheme?: "light" | "dark";
  ready?: () => void;
  expand?: () => void;
}
declare global {
  interface Window {
    Telegram?: { WebApp?: TelegramWebApp };
  }
}

import { $, api, type Balances, initData, plural, showBalances, showError, whenChanged } from "./api";
import { buyMissiles, loadGrid, startGrid } from "./grid";
import { loadHistory } from "./history";
import { claimPromo, loadMissions } from "./missions";
import { discoverWallets } from "./wallet";
import { reveal, showWheel, spin, type WheelStatus } from "./wheel";

interface Catalog {
  games: Array<{ game_key: string; title: string; available: boolean; reason: string | null }>;
  items: Array<{ item_key: string; title: string; price_points: number }>;
  balances: Balances;
}

function showCatalog(c: Catalog): void {
  showBalances(c.balances);
  $("games").replaceChildren(
    ...c.games.map((g) => {
      const li = document.createElement("li");
      li.textContent = g.available ? g.title : `${g.title}: ${g.reason ?? "not available now"}`;
      return li;
    }),
  );
  const missile = c.items.find((item) => item.item_key === "missile");
  if (missile) $("buy-missiles").textContent = `Buy 5 missiles (${plural(5 * missile.price_points, "point", "points")})`;
  $("items").replaceChildren(
    ...c.items.map((item) => {
      const li = document.createElement("li");
      li.textContent = `${item.title}: ${plural(item.price_points, "point", "points")}`;
      return li;
    }),
  );
}

async function refresh(): Promise<void> {
  // Every section's call at once: the first screen waits for the slowest, not for their sum.
  const [catalog, wheel] = await Promise.all([
    api<Catalog>("/api/messenger/games/catalog", {}),
    api<WheelStatus>("/api/messenger/games/spin-wheel/status", {}),
    loadGrid(),
    loadMissions(),
    loadHistory(),
  ]);
  showCatalog(catalog);
  showWheel(wheel);
  $("game").hidden = false;
}

/** Inside Telegram (it opens the page with #tgWebAppData…) and without its script yet: load it, from Telegram only. */
function loadTelegramScript(): void {
  if (window.Telegram?.WebApp || !location.hash.includes("tgWebAppData")) return;
  const script = document.createElement("script");
  script.src = "https://telegram.org/js/telegram-web-app.js";
  script.onload = () => {
    window.Telegram?.WebApp?.ready?.();
    window.Telegram?.WebApp?.expand?.();
  };
  document.head.append(script);
}

function start(): void {
  whenChanged(refresh);
  window.Telegram?.WebApp?.ready?.();
  window.Telegram?.WebApp?.expand?.();
  loadTelegramScript();
  discoverWallets();
  $("spin").addEventListener("click", () => void spin());
  $("reveal").addEventListener("click", () => void reveal());
  $("grid-start").addEventListener("click", () => void startGrid());
  $("buy-missiles").addEventListener("click", () => void buyMissiles());
  $<HTMLFormElement>("promo-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const code = $<HTMLInputElement>("promo-code").value.trim();
    if (code) void claimPromo(code);
  });
  $<HTMLFormElement>("paste-form").addEventListener("submit", (event) => {
    event.preventDefault();
    sessionStorage.setItem("herald-init-data", $<HTMLTextAreaElement>("paste").value.trim());
    $("outside").hidden = true;
    refresh().catch(showError);
  });
  if (!initData()) {
    $("outside").hidden = false;
    return;
  }
  refresh().catch(showError);
}

start();
