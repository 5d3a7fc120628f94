// The welcome gift and promo codes on the mini-app's page: what a newcomer opens once (the catalog says whether it
// is there), and the code form. Both credit the balances; the page is then redrawn (refresh).
import { ApiError, api, clearMessages, inWords, say } from "./api";
import { $ } from "./dom";
import { rewardText, t } from "./i18n";
import { later, refresh, setBalances, whenCatalogChanges } from "./state";
import { haptic, whilePlaying } from "./telegram";

whenCatalogChanges((catalog) => {
  const gift = catalog.welcome_gift;
  // Once opened it stays on screen with its message until the next redraw after another action.
  if (!gift.available && $("gift-msg").textContent) return;
  $("gift").hidden = !gift.available;
  $("gift-body").textContent = t("gift.body", { reward: rewardText(gift.reward) });
});

export async function openGift(): Promise<void> {
  clearMessages();
  haptic.tap();
  const button = $<HTMLButtonElement>("gift-open");
  button.disabled = true;
  try {
    const r = await whilePlaying(() => api("/api/messenger/games/welcome-gift/open", {}));
    button.hidden = true;
    say("gift-msg", t("gift.opened", { reward: rewardText(r.welcome_gift.reward) }), "good");
    haptic.success();
    setBalances(r.balances);
  } catch (err) {
    button.disabled = false;
    // 409 game_state_conflict here: the player's first days are over.
    say("gift-msg", err instanceof ApiError && err.code === "game_state_conflict" ? t("error.gift_gone") : inWords(err), "bad");
  }
  await refresh(["catalog"]).catch(() => undefined);
  later(["history"]);
}

/** Promo codes as the server takes them: 3–48 letters, digits, - and _ (checked here first, in words). */
const CODE = /^[A-Za-z0-9_-]{3,48}$/;

export async function claimPromo(): Promise<void> {
  clearMessages();
  haptic.tap();
  const code = $<HTMLInputElement>("promo-code").value.trim();
  if (!code) return say("promo-msg", t("promo.empty"), "bad");
  if (!CODE.test(code)) return say("promo-msg", t("error.promo_invalid"), "bad");
  try {
    const r = await whilePlaying(() => api("/api/messenger/games/promos/claim", { request_id: crypto.randomUUID(), code }));
    haptic.success();
    setBalances(r.balances);
    later(["missions", "history"]);
    say("promo-msg", t("promo.claimed", { code: r.promo.code, reward: rewardText(r.promo.reward) }), "good");
  } catch (err) {
    say("promo-msg", inWords(err), "bad");
  }
}
