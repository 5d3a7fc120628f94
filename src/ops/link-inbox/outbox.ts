import { type AppContext, slot, stateOf } from "../../context";
import { checkResolvedTarget, targetPolicyOf } from "../../webhooks/service";
import { applyAlertTransitions } from "../alerts/state";
import { warnRefusedLinkTargets } from "./target-health";
import { linkTargets, type STATUS_CODE_FAMILIES, subscribeLinkInbox } from "./notify";
import { type DueMessage, dueMessages, insertAttempt, leaseMessage, markInterruptedDead, settleMessage } from "./store";

// The link inbox's sender: leases due outbox rows in one short transaction (the attempt is counted before the
// request leaves), POSTs each outside any transaction, and records every attempt as an ops_link_events row.
// Failures retry on a doubling schedule capped at one hour, without jitter (a handful of chat targets cannot
// stampede). A target the send-time SSRF check refuses is dead at once: retrying cannot change the policy. Every
// instance drains the one outbox; an outcome is written only under the lease it was sent with.

const BATCH = 16;
const MAX_PASSES = 50;
const MAX_RETRY_SECONDS = 3600;

type Leased = DueMessage & { lease_until: string; link: string | null };

interface Outcome {
  ok: boolean;
  statusCode: number | null;
  family: (typeof STATUS_CODE_FAMILIES)[number];
  error: string | null;
  /** Retrying cannot help (target refused or no longer configured). */
  final?: boolean;
}

const familyOf = (code: number): Outcome["family"] =>
  code >= 200 && code < 300 ? "2xx" : code >= 400 && code < 500 ? "4xx" : code >= 500 && code < 600 ? "5xx" : "other";

/** The Herald link a message carries (its last whitespace-separated word), for the event's url column. */
const linkOf = (payload: string): string | null => {
  try {
    const text = (JSON.parse(payload) as { text?: string }).text ?? "";
    const last = text.split(/\s+/).pop() ?? "";
    return /^https?:\/\//.test(last) ? last : null;
  } catch {
    return null;
  }
};

export class LinkInboxSender {
  private running: Promise<number> | null = null;

  constructor(private readonly ctx: AppContext) {}

  /** One pass: apply new alert runs (their state changes queue notices), then send everything due. Resolves with the attempts recorded. */
  runOnce(): Promise<number> {
    if (this.running) return this.running;
    const pass = (async () => {
      await applyAlertTransitions(this.ctx);
      let attempts = 0;
      for (let pass = 0; pass < MAX_PASSES; pass++) {
        const batch = await this.lease();
        if (batch.length === 0) break;
        const outcomes = await Promise.all(batch.map((d) => this.send(d)));
        for (const [i, d] of batch.entries()) await this.record(d, outcomes[i]!);
        attempts += batch.length;
      }
      return attempts;
    })();
    const running = pass.finally(() => {
      if (this.running === running) this.running = null;
    });
    this.running = running;
    return running;
  }

  private lease(): Promise<Leased[]> {
    const { store, clock, config } = this.ctx;
    const now = clock.now();
    const nowIso = now.toISOString();
    const until = new Date(now.getTime() + config.linkInbox.timeoutMs + 30_000).toISOString();
    return store.tx(async (t) => {
      const out: Leased[] = [];
      for (const d of await dueMessages(t, store.dialect, nowIso, BATCH)) {
        if (d.attempts >= config.linkInbox.maxAttempts) {
          await markInterruptedDead(t, d.id);
          continue;
        }
        await leaseMessage(t, d.id, until);
        out.push({ ...d, attempts: d.attempts + 1, lease_until: until, link: linkOf(d.payload) });
      }
      return out;
    });
  }

  private async send(d: Leased): Promise<Outcome> {
    const target = linkTargets(this.ctx).find((t) => t.label === d.target);
    if (!target) return { ok: false, statusCode: null, family: "other", error: "target is no longer in LINK_INBOX_WEBHOOK_URLS", final: true };
    if (target.messengerChatId) {
      // The messenger bot: the Bot API's sendMessage at MESSENGER_BOT_API_BASE (the operator's own endpoint, as
      // the bot outbox uses it). Delivered only on a 2xx with `"ok": true`.
      const { botToken, botApiBase } = this.ctx.config.messenger;
      const chatId = target.messengerChatId;
      const text = (JSON.parse(d.payload) as { text?: string }).text ?? "";
      const body = JSON.stringify({ chat_id: /^-?\d+$/.test(chatId) ? Number(chatId) : chatId, text, link_preview_options: { is_disabled: true } });
      return this.post(`${botApiBase.replace(/\/+$/, "")}/bot${botToken}/sendMessage`, body, "Bot API", botToken ?? null);
    }
    const refused = await checkResolvedTarget(target.url, targetPolicyOf(this.ctx.config));
    if (refused) return { ok: false, statusCode: null, family: "other", error: `target refused: ${refused}`, final: true };
    return this.post(target.url, d.payload, "target", null);
  }

  /**
   * One POST with LINK_INBOX_TIMEOUT_MS, its outcome as an event records it. The URL carries a secret (a chat
   * webhook's path, the bot token): no error text ever quotes it — only a status, an error code, or an answer's
   * description with `secret` replaced. For the Bot API (`secret` set) the answer is read and only `"ok": true`
   * on a 2xx is delivered; a chat webhook's answer body is not read at all.
   */
  private async post(url: string, body: string, who: string, secret: string | null): Promise<Outcome> {
    const timeoutMs = this.ctx.config.linkInbox.timeoutMs;
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", "user-agent": "Herald-LinkInbox/1" },
        body,
        redirect: "manual",
        signal,
      });
      const answer = secret ? ((await res.json().catch(() => null)) as { ok?: unknown; description?: unknown } | null) : null;
      if (!secret) await res.body?.cancel().catch(() => {});
      const family = familyOf(res.status);
      const ok = family === "2xx" && (!secret || answer?.ok === true);
      const description = secret && typeof answer?.description === "string" ? `: ${answer.description.slice(0, 200).replaceAll(secret, "<BOT_TOKEN>")}` : "";
      return { ok, statusCode: res.status, family, error: ok ? null : `${who} answered HTTP ${res.status}${description}` };
    } catch (err) {
      const name = (err as Error).name;
      if (name === "TimeoutError" || name === "AbortError" || signal.aborted)
        return { ok: false, statusCode: null, family: "timeout", error: `no answer within ${timeoutMs} ms` };
      // The message of a network error can quote the URL: keep only the error code.
      const code = (err as NodeJS.ErrnoException).code;
      return { ok: false, statusCode: null, family: "other", error: `connection failed${code ? ` (${code})` : ""}` };
    }
  }

  private async record(d: Leased, r: Outcome): Promise<void> {
    const cfg = this.ctx.config.linkInbox;
    const now = this.ctx.clock.now();
    const nowIso = now.toISOString();
    const status = r.ok ? "sent" : r.final || d.attempts >= cfg.maxAttempts ? "dead" : "pending";
    const delay = Math.min(MAX_RETRY_SECONDS, cfg.retryBaseSeconds * 2 ** (d.attempts - 1));
    const next = status === "pending" ? new Date(now.getTime() + delay * 1000).toISOString() : nowIso;
    await this.ctx.store.tx(async (t) => {
      const settled = await settleMessage(t, { id: d.id, leaseUntil: d.lease_until, status, nextIso: next, error: r.error, sentAt: r.ok ? nowIso : null });
      if (!settled) return; // the lease was lost (expired and taken again): that sender records its own attempt
      await insertAttempt(t, {
        at: nowIso,
        event: d.event,
        issue_id: d.issue_id,
        target: d.target,
        url: d.link,
        attempt: d.attempts,
        status_code: r.statusCode,
        status_code_family: r.family,
        skip_reason: r.final ? "other" : null,
        outbox_id: d.id,
        error: r.error,
      });
    });
    if (status === "dead")
      this.ctx.log.warn("link-inbox message dead", { outbox_id: d.id, event: d.event, issue_id: d.issue_id, target: d.target, error: r.error });
  }
}

const SENDER = slot("link-inbox sender", (ctx) => new LinkInboxSender(ctx));

/** One sender per context, so the job and tests share a pass (the lease makes concurrent passes safe anyway). */
export const linkInboxSender = (ctx: AppContext): LinkInboxSender => stateOf(ctx, SENDER);

/** The link-inbox job (LINK_INBOX_CRON, every 5 s by default). */
export function registerLinkInboxJob(ctx: AppContext): void {
  subscribeLinkInbox(ctx);
  // A target the SSRF policy refuses is dead from the first message: say so at start, not only in the events.
  warnRefusedLinkTargets(ctx);
  ctx.jobs.register({
    name: "link-inbox",
    pattern: ctx.config.linkInbox.cron,
    description:
      "Applies new alert runs (an alert that fires, escalates or resolves queues a notice; preflight anomalies too), then posts due messages to the chat targets (LINK_INBOX_WEBHOOK_URLS) with retries",
    quietWhenIdle: true,
    everyInstance: true, // outbox rows are leased one by one: every instance drains the queue
    run: async () => ({ idle: (await linkInboxSender(ctx).runOnce()) === 0 }),
  });
}
