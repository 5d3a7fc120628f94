// The player's history on the mini-app's page: the latest game-ledger entries, in words.
import { $, api, plural, type Reward } from "./api";

interface Activity {
  recent: Array<{ id: number; action: string; deltas: Reward; created_at: string }>;
}

/** What each ledger action reads as in the history. */
const ACTIONS: Record<string, string> = {
  "spin_wheel.play": "Spin",
  "recon_grid.reveal": "Grid cell revealed",
  "recon_grid.purchase": "Missiles bought",
  "items.purchase": "Item bought",
  "promo.claim": "Promo code",
};

/** A ledger row's change, signed: "+25 points, −1 missile". */
const deltaText = (d: Reward) =>
  [
    d.points && `${d.points > 0 ? "+" : "−"}${plural(Math.abs(d.points), "point", "points")}`,
    d.free_spins && `${d.free_spins > 0 ? "+" : "−"}${plural(Math.abs(d.free_spins), "spin", "spins")}`,
    d.missiles && `${d.missiles > 0 ? "+" : "−"}${plural(Math.abs(d.missiles), "missile", "missiles")}`,
  ]
    .filter(Boolean)
    .join(", ") || "no change";

/** The player's latest game-ledger entries, newest first. */
export async function loadHistory(): Promise<void> {
  const { recent } = await api<Activity>("/api/messenger/engagement/activity-preview?limit=10");
  $("history").replaceChildren(
    ...recent.map((r) => {
      const li = document.createElement("li");
      const what = ACTIONS[r.action] ?? (r.action.startsWith("mission") ? "Mission reward" : r.action);
      li.textContent = `${new Date(r.created_at).toLocaleString()} · ${what}: ${deltaText(r.deltas)}`;
      return li;
    }),
  );
  $("history-none").hidden = recent.length > 0;
}
