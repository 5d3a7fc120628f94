// The player's history on the mini-app's page: the latest game-ledger entries, in the player's words and time.
import { api } from "./api";
import { $, h } from "./dom";
import { dateTimeText, type MessageKey, REWARD_PARTS, t } from "./i18n";
import { onRefresh } from "./state";
import type { Activity } from "./wire";

/** What each ledger action reads as in the history. */
const ACTIONS: Record<string, MessageKey> = {
  "spin_wheel.play": "history.spin",
  "recon_grid.reveal": "history.reveal",
  "recon_grid.purchase": "history.missiles",
  "items.purchase": "history.item",
  "promo.claim": "history.promo",
  "welcome_gift.open": "history.gift",
};

/** A ledger row's change, signed: "+25 points, −1 missile". */
function deltaText(d: Activity["recent"][number]["deltas"]): string {
  const parts = REWARD_PARTS.filter(([k]) => d[k]).map(([k, words]) => `${d[k] > 0 ? "+" : "−"}${t(words, { n: Math.abs(d[k]) })}`);
  return parts.join(", ") || t("history.no_change");
}

onRefresh("history", async () => {
  const { recent } = await api("/api/messenger/engagement/activity-preview?limit=10");
  $("history").replaceChildren(
    ...recent.map((r) => {
      const what = ACTIONS[r.action] ?? (r.action.startsWith("mission") ? "history.mission" : "history.other");
      return h("li", {}, h("span", { className: "hint", textContent: `${dateTimeText(r.created_at)} · ` }), `${t(what)}: ${deltaText(r.deltas)}`);
    }),
  );
  $("history-none").hidden = recent.length > 0;
});
