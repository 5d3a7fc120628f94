// The spin wheel on the mini-app's page: the segments, the commitment shown before the spin, the spin and its result,
// and revealing a spin's seed to check it on the fairness page (<base>/fairness).
import { $, api, ApiError, type Balances, plural, randomHex, type Reward, rewardText, showBalances, showError } from "./api";
import { loadHistory } from "./history";

interface Segment {
  label: string;
  weight: number;
  reward: Reward;
}
export interface WheelStatus {
  available: boolean;
  free_spin_available: boolean;
  next_free_spin_at: string | null;
  free_spin_balance: number;
  campaign: { title: string; segments: Segment[] };
  fairness: { server_seed_hash: string; client_seed: string; next_nonce: number; committed_at: string; next_server_seed_hash: string | null };
  revealed_seed?: { server_seed: string; server_seed_hash: string; client_seed: string } | null;
}
interface SpinAnswer {
  spin: {
    segment_index: number;
    segment_label: string;
    reward: Reward;
    paid_with: string;
    fairness: { server_seed_hash: string; client_seed: string; nonce: number };
  };
  balances: Balances;
}

/** The segment the player's last spin landed on, kept highlighted when the wheel is drawn again. */
let lastWon: number | null = null;
/** The wheel as last drawn, and the last spin's nonce: what revealing the seed needs. */
let lastStatus: WheelStatus | null = null;
let lastNonce: number | null = null;

export function showWheel(s: WheelStatus): void {
  lastStatus = s;
  $("wheel-title").textContent = s.campaign.title;
  const list = $("segments");
  list.replaceChildren(
    ...s.campaign.segments.map((seg, i) => {
      const li = document.createElement("li");
      li.id = `segment-${i}`;
      li.textContent = seg.label;
      if (i === lastWon) li.className = "won";
      return li;
    }),
  );
  $("commitment").textContent = s.fairness.server_seed_hash;
  $("client-seed").textContent = s.fairness.client_seed;
  $("nonce").textContent = String(s.fairness.next_nonce);
  const spin = $<HTMLButtonElement>("spin");
  spin.disabled = !s.available;
  $("spin-note").textContent = s.free_spin_available
    ? "Your daily free spin is ready."
    : s.free_spin_balance > 0
      ? `You have ${plural(s.free_spin_balance, "spin", "spins")} in hand.`
      : `Next free spin at ${s.next_free_spin_at ? new Date(s.next_free_spin_at).toLocaleString() : "a later time"}.`;
}

export async function spin(): Promise<void> {
  const button = $<HTMLButtonElement>("spin");
  button.disabled = true;
  $("error").hidden = true;
  try {
    const answer = await api<SpinAnswer>("/api/messenger/games/spin-wheel/play", { request_id: crypto.randomUUID() });
    const s = answer.spin;
    lastWon = s.segment_index;
    lastNonce = s.fairness.nonce;
    $("reveal-box").hidden = false;
    $("reveal").hidden = false;
    $("check-link").hidden = true;
    for (const li of $("segments").children) li.classList.toggle("won", li.id === `segment-${s.segment_index}`);
    $("result").textContent = `${s.segment_label}: you won ${rewardText(s.reward)}.`;
    $("result-fairness").textContent =
      `Committed hash ${s.fairness.server_seed_hash}, client seed ${s.fairness.client_seed}, nonce ${s.fairness.nonce}. The server seed is revealed when you change your client seed.`;
    showBalances(answer.balances);
    showWheel(await api<WheelStatus>("/api/messenger/games/spin-wheel/status", {}));
    await loadHistory();
  } catch (err) {
    showError(err);
    button.disabled = false;
  }
}

/**
 * Reveals the server seed of the last spin's pair by starting a new pair with a fresh client seed — onto the seed
 * whose hash the wheel showed as next_server_seed_hash, never one made by this call — then links the check page with
 * the revealed values in the fragment (the server never sees what the check page computes).
 */
export async function reveal(): Promise<void> {
  const status = lastStatus;
  if (!status || lastNonce === null) return;
  $("error").hidden = true;
  try {
    const rotated = await api<WheelStatus>("/api/messenger/games/spin-wheel/status", {
      client_seed: randomHex(8),
      next_server_seed_hash: status.fairness.next_server_seed_hash,
    });
    const seed = rotated.revealed_seed;
    if (!seed) throw new ApiError(200, "not_revealed", "The game did not reveal the seed; try again.");
    const fragment = new URLSearchParams({
      game: "wheel",
      server_seed: seed.server_seed,
      hash: seed.server_seed_hash,
      client_seed: seed.client_seed,
      nonce: String(lastNonce),
      weights: status.campaign.segments.map((x) => x.weight).join(","),
    });
    const link = $<HTMLAnchorElement>("check-link");
    link.href = `${document.documentElement.dataset.appBase ?? "/app"}/fairness#${fragment}`;
    link.hidden = false;
    $("reveal").hidden = true;
    showWheel(rotated);
  } catch (err) {
    showError(err);
  }
}
