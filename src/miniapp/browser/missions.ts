// Missions on the mini-app's page. A mission the game counts moves by itself: a joined one whose server count
// (observed) is past its recorded progress gets a progress event after every refresh, so its reward is paid without
// a button. A self-reported mission keeps its "I did one more" button: only the player knows.
import { api, clearMessages, inWords, say } from "./api";
import { $, h } from "./dom";
import { rewardText, t } from "./i18n";
import { onRefresh, readAfterPlaysOnlyWhen, refresh } from "./state";
import { haptic } from "./telegram";
import type { Mission } from "./wire";

/** The count a mission's bar shows: the server's own count as soon as it has one (capped at the target). */
const shownProgress = (m: Mission) => {
  const e = m.enrollment;
  if (!e) return 0;
  if (e.completed) return m.target;
  return Math.min(m.target, Math.max(e.progress, e.observed ?? 0));
};

/** Whether a joined mission the game counts is under way: only then can a play move the missions. */
let underWay = false;
readAfterPlaysOnlyWhen("missions", () => underWay);

/** The server count each mission last sent a progress event for: one event per count, however often it redraws. */
const sentAt = new Map<string, number>();

function card(m: Mission): HTMLElement {
  const e = m.enrollment;
  const progress = shownProgress(m);
  const about = ` · ${t(m.progress_source === "server" ? "missions.counted" : "missions.reported")} · ${t("missions.reward", { reward: rewardText(m.reward) })}`;
  const status = !e ? t("missions.not_joined") : e.completed ? t("missions.done") : t("missions.progress", { progress, target: m.target });
  const li = h(
    "li",
    { id: `mission-${m.mission_key}`, className: "mission" },
    h("p", {}, h("strong", { textContent: m.title }), h("span", { className: "hint", textContent: about })),
    h("progress", { max: m.target, value: progress, attrs: { "aria-label": t("missions.bar", { title: m.title, progress, target: m.target }) } }),
    h("p", { className: "hint", id: `mission-status-${m.mission_key}`, textContent: status }),
  );
  if (!e || (!e.completed && m.progress_source === "self_reported")) {
    const label = t(e ? "missions.report" : "missions.join");
    li.append(h("button", { type: "button", className: "secondary", id: `mission-action-${m.mission_key}`, textContent: label, onclick: () => void act(m) }));
  }
  li.append(h("p", { id: `mission-msg-${m.mission_key}`, className: "msg", attrs: { role: "status" } }));
  return li;
}

/** Draws the cards; a message beside a card (a reward paid, a refusal) stays until the next action clears it. */
function draw(missions: Mission[]): void {
  underWay = missions.some((m) => m.progress_source === "server" && m.enrollment !== null && !m.enrollment.completed);
  const kept = new Map<string, [string, string]>();
  for (const el of $("missions").querySelectorAll<HTMLElement>(".msg")) if (el.textContent) kept.set(el.id, [el.className, el.textContent]);
  $("missions").replaceChildren(...missions.map(card));
  for (const [id, [className, text]] of kept) {
    const el = document.getElementById(id);
    if (el) {
      el.className = className;
      el.textContent = text;
    }
  }
  $("missions-none").hidden = missions.length > 0;
}

/** Sends the progress the game has counted for every joined mission that is behind it; true when a reward was paid. */
async function catchUp(missions: Mission[]): Promise<boolean> {
  const behind = missions.filter((m) => {
    const e = m.enrollment;
    return m.progress_source === "server" && e && !e.completed && (e.observed ?? 0) > e.progress && sentAt.get(m.mission_key) !== e.observed;
  });
  let paid = false;
  for (const m of behind) {
    sentAt.set(m.mission_key, m.enrollment!.observed ?? 0);
    try {
      const r = await api("/api/messenger/missions/progress", { mission_key: m.mission_key, client_event_id: crypto.randomUUID() });
      if (r.reward_paid) {
        paid = true;
        say(`mission-msg-${m.mission_key}`, t("missions.paid", { title: m.title, reward: rewardText(r.reward_paid) }), "good");
        haptic.success();
      } else if (!r.accepted && (r.reason === "daily_cap_reached" || r.reason === "rate_limited")) {
        say(`mission-msg-${m.mission_key}`, t("missions.later", { title: m.title }));
      }
    } catch (err) {
      say(`mission-msg-${m.mission_key}`, inWords(err), "bad");
    }
  }
  return paid;
}

const load = () => api("/api/messenger/missions/catalog", {});

onRefresh("missions", async () => {
  const { missions } = await load();
  draw(missions);
  if (!missions.some((m) => m.progress_source === "server" && m.enrollment && (m.enrollment.observed ?? 0) > m.enrollment.progress)) return;
  // Moved on: drawn again with the recorded progress; a reward paid, the balances and history too (not in its answer).
  const paid = await catchUp(missions);
  draw((await load()).missions);
  if (paid) void refresh(["catalog", "history"]).catch(() => undefined);
});

/** Join a mission, or report one more for a self-reported one. */
async function act(m: Mission): Promise<void> {
  clearMessages();
  haptic.tap();
  const out = `mission-msg-${m.mission_key}`;
  let text = "";
  let kind: "good" | "bad" | "" = "";
  try {
    if (!m.enrollment) {
      await api("/api/messenger/missions/enroll", { mission_key: m.mission_key });
      text = t("missions.joined", { title: m.title });
    } else {
      const r = await api("/api/messenger/missions/progress", {
        mission_key: m.mission_key,
        client_event_id: crypto.randomUUID(),
        progress: m.enrollment.progress + 1,
      });
      text = r.reward_paid
        ? t("missions.paid", { title: m.title, reward: rewardText(r.reward_paid) })
        : t(r.accepted ? "missions.moved" : "missions.later", { title: m.title, progress: r.progress, target: r.target });
      kind = r.reward_paid ? "good" : "";
      if (r.reward_paid) haptic.success();
    }
  } catch (err) {
    text = inWords(err);
    kind = "bad";
  }
  await refresh(kind === "good" ? ["catalog", "missions", "history"] : ["missions"]).catch(() => undefined);
  say(out, text, kind);
}
