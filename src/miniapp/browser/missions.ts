// Missions and promo codes on the mini-app's page: join a mission and move it on, claim a code.
import { $, api, type Balances, changed, inWords, type Reward, rewardText, showBalances } from "./api";
import { loadHistory } from "./history";
import { showWheel, type WheelStatus } from "./wheel";

interface PromoAnswer {
  promo: { code: string; reward: Reward };
  replayed: boolean;
  balances: Balances;
}
interface Enrollment {
  progress: number;
  observed: number | null;
  target: number;
  completed: boolean;
}
interface Mission {
  mission_key: string;
  title: string;
  progress_source: "server" | "self_reported";
  target: number;
  reward: Reward;
  enrollment: Enrollment | null;
}
interface ProgressAnswer {
  accepted: boolean;
  message: string | null;
  progress: number;
  target: number;
  completed: boolean;
  reward_paid: Reward | null;
}

export async function claimPromo(code: string): Promise<void> {
  const out = $("promo-result");
  try {
    const r = await api<PromoAnswer>("/api/messenger/games/promos/claim", { request_id: crypto.randomUUID(), code });
    out.textContent = `Code ${r.promo.code} applied: you got ${rewardText(r.promo.reward)}.`;
    out.className = "good";
    showBalances(r.balances);
    showWheel(await api<WheelStatus>("/api/messenger/games/spin-wheel/status", {}));
    await loadHistory();
  } catch (err) {
    out.className = "bad";
    out.textContent = inWords(err);
  }
}

/** One mission's card: what it counts, the progress, and the one action that moves it on. */
function missionCard(m: Mission): HTMLElement {
  const li = document.createElement("li");
  li.id = `mission-${m.mission_key}`;
  li.className = "mission";
  const title = document.createElement("p");
  const name = document.createElement("strong");
  name.textContent = m.title;
  const about = document.createElement("span");
  about.className = "hint";
  about.textContent = ` ${m.progress_source === "server" ? "counted by the game" : "you report it"} · reward: ${rewardText(m.reward)}`;
  title.append(name, about);
  const e = m.enrollment;
  const bar = document.createElement("progress");
  bar.max = m.target;
  bar.value = e?.progress ?? 0;
  bar.setAttribute("aria-label", `${m.title}: ${e?.progress ?? 0} of ${m.target}`);
  const status = document.createElement("p");
  status.className = "hint";
  status.id = `mission-status-${m.mission_key}`;
  status.textContent = !e
    ? `Not joined yet (0 of ${m.target}).`
    : e.completed
      ? `Done: ${m.target} of ${m.target}, reward paid.`
      : `${e.progress} of ${m.target}.`;
  li.append(title, bar, status);
  if (!e?.completed) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "secondary";
    button.id = `mission-action-${m.mission_key}`;
    button.textContent = !e ? "Join" : m.progress_source === "server" ? "Update my progress" : "I did one more";
    button.addEventListener("click", () => void missionAction(m));
    li.append(button);
  }
  return li;
}

export async function loadMissions(): Promise<void> {
  const { missions } = await api<{ missions: Mission[] }>("/api/messenger/missions/catalog", {});
  const list = $("missions");
  list.replaceChildren(...missions.map(missionCard));
  $("missions-none").hidden = missions.length > 0;
}

/** Join a mission, or send a progress event (the server's own count for a server mission; one more for the rest). */
async function missionAction(m: Mission): Promise<void> {
  const out = $("mission-result");
  try {
    if (!m.enrollment) {
      await api("/api/messenger/missions/enroll", { mission_key: m.mission_key });
      out.textContent = `You joined “${m.title}”.`;
    } else {
      const body: Record<string, unknown> = { mission_key: m.mission_key, client_event_id: crypto.randomUUID() };
      if (m.progress_source === "self_reported") body.progress = m.enrollment.progress + 1;
      const r = await api<ProgressAnswer>("/api/messenger/missions/progress", body);
      out.textContent = r.reward_paid
        ? `“${m.title}” done: you got ${rewardText(r.reward_paid)}.`
        : r.accepted
          ? `“${m.title}”: ${r.progress} of ${r.target}.`
          : (r.message ?? "No progress to record yet.");
      if (r.reward_paid) await changed();
    }
    out.className = "";
    await loadMissions();
  } catch (err) {
    out.className = "bad";
    out.textContent = inWords(err);
  }
}
