import { afterEach, expect, test } from "bun:test";
import { ALERTS_MONITOR_JOB } from "../../src/ops/alerts/monitor";
import { runBackup } from "../../src/ops/backups/backup";
import { redactTarget } from "../../src/ops/link-inbox/notify";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { createAdminToken } from "../support/partner";
import { plantDeadLetters } from "../ops/support";

// /metrics gains what an external Prometheus needs to page on Herald (issue 31): when each job last succeeded,
// which alerts fire, whether each link-inbox target is up, and how old the newest backup is. On PostgreSQL Herald
// makes no backups of its own, so there the backup series is absent and the rest is the same.

const T0 = "2026-04-01T10:00:00.000Z";
let h: TestApp;
afterEach(() => h?.close());

/** The value of one series (exact label text) in the exposition, or undefined when absent. */
function series(body: string, name: string, labels = ""): string | undefined {
  const prefix = `${name}${labels ? `{${labels}}` : ""} `;
  return body
    .split("\n")
    .find((l) => l.startsWith(prefix))
    ?.slice(prefix.length);
}

test("job last success, alert state per key and level, link-inbox target health and backup age", async () => {
  const good = "https://hooks.example.com/services/T1/B2/secret";
  const refused = "http://169.254.169.254/latest";
  h = await openTestApp({ clock: new FakeClock(T0), env: { LINK_INBOX_WEBHOOK_URLS: `${good},${refused}` } });
  const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
  const scrape = async () => {
    const res = await h.request("/metrics", { headers: auth });
    expect(res.status).toBe(200);
    return res.text();
  };

  let body = await scrape();
  expect(body).toContain("# TYPE herald_job_last_success_timestamp_seconds gauge");
  expect(series(body, "herald_job_last_success_timestamp_seconds", `job="${ALERTS_MONITOR_JOB}"`)).toBeUndefined();
  const ownBackups = h.ctx.store.dialect === "sqlite";
  expect(series(body, "herald_backup_age_seconds")).toBe(ownBackups ? "+Inf" : undefined);
  expect(series(body, "herald_link_inbox_target_up", `target="${redactTarget(good)}"`)).toBe("1");
  expect(series(body, "herald_link_inbox_target_up", `target="${redactTarget(refused)}"`)).toBe("0");
  expect(body).not.toContain("secret"); // the target's URL is never shown, only its label

  // Three dead letters: the monitor's dead-letter alert fires at warn.
  await plantDeadLetters(h.ctx.store, 3, T0);
  expect((await h.ctx.jobs.runNow(ALERTS_MONITOR_JOB)).ok).toBe(true);
  if (ownBackups) await runBackup(h.ctx, { actor: { kind: "cli", user: "test" } });
  h.clock.advanceSeconds(90);

  body = await scrape();
  const last = Number(series(body, "herald_job_last_success_timestamp_seconds", `job="${ALERTS_MONITOR_JOB}"`));
  expect(last).toBeGreaterThanOrEqual(Date.parse(T0) / 1000);
  expect(last).toBeLessThan(Date.parse(T0) / 1000 + 5);
  expect(series(body, "herald_alert_firing", 'alert="webhooks:dead_letter_growth",level="warn"')).toBe("1");
  expect(series(body, "herald_alert_firing", 'alert="digest:403_spike",level="ok"')).toBe("0");
  if (ownBackups) expect(Number(series(body, "herald_backup_age_seconds"))).toBe(90);
  else expect(series(body, "herald_backup_age_seconds")).toBeUndefined();
});
