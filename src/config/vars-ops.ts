// What the operators watch — the public status page, readiness, the link inbox — as Config's `status`, `readiness`
// and `linkInbox`, spread into the tree of src/config/vars.ts in this order.
import { CRON, int, list, text, v } from "./var-spec";

export const OPS_VARS = {
  /** The public status page (src/status; docs/status.md). */
  status: {
    policyPath: v("STATUS_POLICY_PATH", {
      kind: text(/^.*$/, "a file path"),
      doc: "Status policy file (YAML or JSON): thresholds per check. Unset: the built-in default; unreadable or invalid: the default too, and GET /api/public/system-status/policy reports loaded=false with the error.",
    }),
    snapshotCron: v("STATUS_SNAPSHOT_CRON", {
      kind: CRON,
      fallback: "0 * * * * *",
      doc: "Schedule of the status-snapshot job (evaluates every check, stores a snapshot, opens and closes incidents).",
    }),
    snapshotRetentionDays: v("STATUS_SNAPSHOT_RETENTION_DAYS", {
      kind: int(91, 3650),
      fallback: "100",
      doc: "Days of status snapshots and incidents kept (uptime, the 90-day bars and the badges read them).",
    }),
  },
  /**
   * Operator readiness: the 403-noise thresholds and the synthetic probes (src/ops/readiness/service.ts,
   * src/ops/readiness/probes.ts; docs/ops-readiness.md).
   */
  readiness: {
    noiseMaxPercent: v("READINESS_403_NOISE_MAX_PERCENT", {
      kind: text(/^(100(\.0{1,4})?|\d{1,2}(\.\d{1,4})?)$/, "a percentage from 0 to 100 with up to 4 decimals, e.g. 5 or 0.5"),
      fallback: "5",
      map: Number,
      doc: "Readiness threshold of the 403 noise level: a window is within it while its 403s are at most this percent of its requests.",
    }),
    noiseMaxPerHour: v("READINESS_403_MAX_PER_HOUR", {
      kind: int(0, 1_000_000_000),
      fallback: "0",
      doc: "Second readiness threshold: at most this many 403s per hour on average over a window (0 = off; only the percentage applies).",
    }),
    probeCron: v("SYNTHETIC_PROBE_CRON", {
      kind: CRON,
      fallback: "20 */5 * * * *",
      doc: "Schedule of the synthetic-probes job, which calls Herald's own public endpoints over HTTP on its listening address (JOBS_DISABLED=synthetic-probes turns it off).",
    }),
    probeTimeoutMs: v("SYNTHETIC_PROBE_TIMEOUT_MS", {
      kind: int(100, 60_000),
      fallback: "5000",
      doc: "Time limit of each synthetic probe request; a slower answer is recorded as a failed probe.",
    }),
    probeRetentionDays: v("SYNTHETIC_PROBE_RETENTION_DAYS", {
      kind: int(1, 3650),
      fallback: "90",
      doc: "Days of synthetic probe results kept; the probes job deletes older rows on each run.",
    }),
  },
  /**
   * Operator link inbox: chat notifications of incidents, alerts and preflight anomalies (src/ops/link-inbox/notify.ts;
   * docs/ops-link-inbox.md). The URLs are secrets: never log or publish them whole.
   */
  linkInbox: {
    webhookUrls: v("LINK_INBOX_WEBHOOK_URLS", {
      kind: list,
      fallback: "",
      secret: true,
      doc: "Comma list of Slack/Discord-compatible incoming-webhook URLs the link inbox posts to; their paths are secrets, so the value is masked and only host + first path segment is ever stored or shown. Checked by the partner-webhook target policy (WEBHOOK_ALLOW_PRIVATE_TARGETS).",
    }),
    /** A Telegram chat the messenger bot posts link-inbox messages to; null: none. */
    messengerChatId: v("LINK_INBOX_MESSENGER_CHAT_ID", {
      kind: text(/^(-?\d{1,16}|@[A-Za-z0-9_]{5,32})?$/, "a Telegram chat id (digits, negative for groups) or @channelusername"),
      fallback: "",
      map: (id): string | null => (id === "" ? null : id),
      doc: "Also post link-inbox messages to this Telegram chat through the messenger bot (sendMessage at MESSENGER_BOT_API_BASE); needs MESSENGER_BOT_TOKEN. Unset: chat webhooks only.",
    }),
    cooldownSeconds: v("LINK_INBOX_COOLDOWN_SECONDS", {
      kind: int(0, 7 * 86_400),
      fallback: "900",
      doc: "A new link-inbox message for the same issue and target within this many seconds is not sent (an event with skip_reason cooldown); resolutions are always sent. 0 = no cooldown.",
    }),
    maxAttempts: v("LINK_INBOX_MAX_ATTEMPTS", {
      kind: int(1, 50),
      fallback: "6",
      doc: "Link-inbox delivery attempts per message and target before it is dead.",
    }),
    retryBaseSeconds: v("LINK_INBOX_RETRY_BASE_SECONDS", {
      kind: int(1, 86_400),
      fallback: "30",
      doc: "First link-inbox retry delay; doubles per attempt, capped at one hour.",
    }),
    timeoutMs: v("LINK_INBOX_TIMEOUT_MS", {
      kind: int(100, 60_000),
      fallback: "5000",
      doc: "Time limit of each link-inbox POST; a slower answer is a timeout attempt.",
    }),
    cron: v("LINK_INBOX_CRON", {
      kind: CRON,
      fallback: "*/5 * * * * *",
      doc: "Schedule of the link-inbox job: applies new alert runs (an alert that fires, escalates or resolves queues a notice), then sends due messages (JOBS_DISABLED=link-inbox turns it off).",
    }),
  },
};
