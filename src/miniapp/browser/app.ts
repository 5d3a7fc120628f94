// The players' mini-app (GET /app), in the browser: the language, Telegram's parts, the first screen and the
// controls; each section in its module beside this one. Every call sends the player's init data as
// `Authorization: tma <init data>` (docs/messenger.md); outside Telegram the page takes it pasted (development).
import { inWords, initData } from "./api";
import { $ } from "./dom";
import { buyMissiles, startGrid } from "./grid";
import { claimPromo, openGift } from "./gift";
import "./history";
import { languageOfInitData, translate, useLanguage } from "./i18n";
import "./missions";
import { firstLoad } from "./state";
import { backButton, haptic, loadTelegram, webApp } from "./telegram";
import { followSystemScheme } from "./theme";
import { discoverWallets } from "./wallet";
import { buySpin, reveal, spin } from "./wheel";

/** The player's language (Telegram's user, else the init data's: the fragment or what was pasted), its words in place. */
async function chooseLanguage(): Promise<void> {
  const code = webApp()?.initDataUnsafe?.user?.language_code ?? languageOfInitData(initData());
  await useLanguage(code ?? "en");
  sessionStorage.setItem("herald-lang", document.documentElement.lang);
  translate();
}

function showError(err: unknown): void {
  $("load-msg").hidden = true;
  const box = $("load-error");
  box.textContent = inWords(err);
  box.hidden = false;
}

/**
 * The balances and the wheel shown as soon as they are in; the sections below them as theirs arrive. The calls go
 * out first: the page's own set-up (its words, theme, controls) runs while they are on their way.
 */
function firstScreen(language: Promise<void>): Promise<void> {
  $("load-msg").hidden = false;
  const { first, rest } = firstLoad(language);
  rest.catch(showError);
  // Marks the page whole (every section drawn): what a test or a screenshot waits for.
  Promise.all([first, rest]).then(
    () => {
      document.body.dataset.loaded = "1";
    },
    () => undefined,
  );
  return first.then(
    () => {
      $("game").hidden = false;
      $("load-msg").hidden = true;
    },
    (err: unknown) => showError(err),
  );
}

function wire(): void {
  $("spin").addEventListener("click", () => void spin());
  $("buy-spin").addEventListener("click", () => void buySpin());
  $("reveal").addEventListener("click", () => void reveal());
  $("gift-open").addEventListener("click", () => void openGift());
  $("grid-start").addEventListener("click", () => void startGrid());
  $("buy-1").addEventListener("click", () => void buyMissiles(1));
  $("buy-5").addEventListener("click", () => void buyMissiles(5));
  $<HTMLFormElement>("promo-form").addEventListener("submit", (event) => {
    event.preventDefault();
    void claimPromo();
  });
  $<HTMLFormElement>("paste-form").addEventListener("submit", (event) => {
    event.preventDefault();
    sessionStorage.setItem("herald-init-data", $<HTMLTextAreaElement>("paste").value.trim());
    $("outside").hidden = true;
    void firstScreen(chooseLanguage());
  });
  for (const d of document.querySelectorAll("details")) d.addEventListener("toggle", () => haptic.select());
}

function start(): void {
  // With init data at hand (Telegram's object, or its #tgWebAppData fragment), the first screen's calls go out at
  // once, beside the player's catalog if it is not English; what they answer is drawn in that language.
  const language = chooseLanguage();
  const early = initData() ? firstScreen(language) : null;
  followSystemScheme();
  wire();
  void language.then(discoverWallets);
  let started = false;
  const begin = () => {
    if (started) return;
    started = true;
    // The main page has nothing to go back to: Telegram's back button is the fairness page's.
    backButton(null);
    if (early) return;
    if (!initData()) {
      $("load-msg").hidden = true;
      $("outside").hidden = false;
      return;
    }
    void firstScreen(language);
  };
  // Telegram's script, when it must be loaded, brings the theme and its parts: begin once it has run (or at once
  // without it).
  loadTelegram(() => {
    void chooseLanguage().then(begin);
  });
  if (!webApp() && sessionStorage.getItem("herald-in-telegram") !== "1") begin();
}

start();
