// The spin wheel on the mini-app's page: the wheel and its odds, what the player can do now (spin, or why not and
// the way there), the spin stopping on the server's segment, and revealing its seed for the fairness page.
import { api, ApiError, checkLink, clearMessages, inWords, randomHex, say, setButton } from "./api";
import { $, h } from "./dom";
import { currentLanguage, percentText, rewardText, t, waitText } from "./i18n";
import { currentCatalog, gameOpen, later, onRefresh, priceOf, refresh, setBalances, whenCatalogChanges } from "./state";
import { haptic, mainButton, whilePlaying } from "./telegram";
import { drawWheel, spinTo, wheelFrame } from "./wheel-draw";
import type { Catalog, Segment, WheelStatus } from "./wire";

let status: WheelStatus | null = null;
let spinning = false;
/** The last spin: what revealing its seed and the check link need. */
let last: { index: number; nonce: number } | null = null;
let rotor: SVGGElement | null = null;

/** A segment in the player's words: the operator's label in English, the reward's words in other languages. */
export function prizeName(s: Segment): string {
  if (currentLanguage() === "en") return s.label;
  const r = s.reward;
  if (r.free_spins && !r.points && !r.missiles) return t("prize.spins", { n: r.free_spins });
  return r.points || r.free_spins || r.missiles ? rewardText(r) : t("prize.nothing");
}

const svg = () => $("wheel") as unknown as SVGSVGElement;

function draw(s: WheelStatus): void {
  rotor ??= wheelFrame(svg());
  const names = s.campaign.segments.map(prizeName);
  const slices = s.campaign.segments.map((seg, i) => ({ label: names[i]!, weight: seg.weight }));
  drawWheel(rotor, slices);
  if (!spinning && !svg().dataset.segment) svg().setAttribute("aria-label", t("wheel.label", { count: names.length }));
  const total = s.campaign.segments.reduce((a, x) => a + x.weight, 0);
  const odds = s.campaign.segments.map((seg, i) => h("li", { textContent: t("wheel.odds_row", { prize: names[i]!, chance: percentText(seg.weight, total) }) }));
  $("odds-list").replaceChildren(...odds);
}

/** The wheel's controls for what the player holds now: spin, or the reason and a spin to buy. */
function controls(s: WheelStatus, c: Catalog): void {
  const open = gameOpen(c, "spin_wheel");
  const price = priceOf(c, "spin_play");
  // The daily spin, or one in hand (the balances may be newer than the status: an answer's, a grid cell's spin).
  const inHand = c.balances.free_spin_balance;
  const available = s.free_spin_available || inHand > 0;
  const canSpin = available && open && !spinning;
  setButton("spin", t(spinning ? "wheel.spinning" : "wheel.spin"), canSpin);
  const buy = $<HTMLButtonElement>("buy-spin");
  buy.hidden = !open || available || price === null;
  let note: string;
  if (!open) note = t("wheel.closed");
  else if (s.free_spin_available) note = t("wheel.free_ready");
  else if (inHand > 0) note = t("wheel.in_hand", { n: inHand });
  else {
    note = t("wheel.none", { wait: waitText(s.cooldown_seconds_remaining) });
    if (price !== null) {
      const cost = t("reward.points", { n: price });
      setButton("buy-spin", t("wheel.buy", { cost }), c.balances.points_balance >= price && !spinning);
      if (c.balances.points_balance < price) note += ` ${t("wheel.buy_short", { cost, has: t("reward.points", { n: c.balances.points_balance }) })}`;
    }
  }
  $("spin-note").textContent = note;
  mainButton(open ? { text: t(spinning ? "wheel.spinning" : "wheel.spin"), enabled: canSpin, busy: spinning, onClick: () => void spin() } : null);
}

function show(s: WheelStatus, c: Catalog): void {
  status = s;
  $("wheel-title").textContent = s.campaign.title === "Daily wheel" || currentLanguage() !== "en" ? t("wheel.title") : s.campaign.title;
  draw(s);
  controls(s, c);
  $("commitment").textContent = s.fairness.server_seed_hash;
  $("client-seed").textContent = s.fairness.client_seed;
  $("nonce").textContent = String(s.fairness.next_nonce);
}

onRefresh("wheel", async (catalog) => {
  const [c, s] = await Promise.all([catalog, api("/api/messenger/games/spin-wheel/status", {})]);
  show(s, c);
});
whenCatalogChanges((c) => {
  if (status) controls(status, c);
});

export async function spin(): Promise<void> {
  const s = status;
  const c = currentCatalog();
  if (!s || !c || spinning) return;
  clearMessages();
  haptic.spin();
  spinning = true;
  controls(s, c);
  try {
    await whilePlaying(async () => {
      const answer = await api("/api/messenger/games/spin-wheel/play", { request_id: crypto.randomUUID() });
      const { segment_index: index, reward } = answer.spin;
      last = { index, nonce: answer.spin.fairness.nonce };
      // The outcome is decided and paid: the wheel only shows it, and the words and balances wait for its stop.
      await spinTo(svg(), rotor!, index);
      const segment = s.campaign.segments[index];
      const prize = segment ? prizeName(segment) : String(index + 1);
      svg().setAttribute("aria-label", t("wheel.stopped", { prize }));
      const won = reward.points + reward.free_spins + reward.missiles > 0;
      say("wheel-msg", won ? t("wheel.won", { reward: rewardText(reward) }) : t("wheel.won_nothing", { prize }), won ? "good" : "");
      haptic.outcome(won);
      $("reveal-box").hidden = false;
      $("reveal").hidden = false;
      $("check-link").hidden = true;
      spinning = false;
      setBalances(answer.balances);
    });
  } catch (err) {
    say("wheel-msg", inWords(err), "bad");
  } finally {
    spinning = false;
  }
  // The wheel's status at once (the daily spin used, the next nonce); missions and history once the taps pause.
  await refresh(["catalog", "wheel"]).catch(() => undefined);
  later(["missions", "history"]);
}

export async function buySpin(): Promise<void> {
  clearMessages();
  haptic.tap();
  try {
    const r = await whilePlaying(() => api("/api/messenger/games/items/purchase", { request_id: crypto.randomUUID(), item_key: "spin_play", quantity: 1 }));
    setBalances(r.balances);
    say("wheel-msg", t("wheel.bought"), "good");
    haptic.success();
    later(["missions", "history"]);
  } catch (err) {
    say("wheel-msg", inWords(err), "bad");
    await refresh(["catalog", "wheel"]).catch(() => undefined);
  }
}

/**
 * Reveals the server seed of the last spin's pair by starting a new pair with a fresh client seed — onto the seed
 * whose hash the wheel showed as next_server_seed_hash, never one made by this call — then links the check page with
 * the revealed values, the segments' names and what the game showed, in the fragment (never sent to the server).
 */
export async function reveal(): Promise<void> {
  const s = status;
  if (!s || last === null) return;
  clearMessages();
  haptic.tap();
  try {
    const rotated = await api("/api/messenger/games/spin-wheel/status", {
      client_seed: randomHex(8),
      next_server_seed_hash: s.fairness.next_server_seed_hash,
    });
    const seed = rotated.revealed_seed;
    if (!seed) throw new ApiError(200, "game_state_conflict");
    const link = $<HTMLAnchorElement>("check-link");
    link.href = checkLink("wheel", seed, last.nonce, {
      weights: s.campaign.segments.map((x) => x.weight).join(","),
      labels: s.campaign.segments.map(prizeName).join(" | "),
      shown: String(last.index),
    });
    link.hidden = false;
    $("reveal").hidden = true;
    link.focus();
    const c = currentCatalog();
    if (c) show(rotated, c);
  } catch (err) {
    say("wheel-msg", inWords(err), "bad");
    await refresh(["wheel"]).catch(() => undefined);
  }
}
