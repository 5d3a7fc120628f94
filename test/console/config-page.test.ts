import { afterEach, expect, test } from "bun:test";
import { CONFIG_VARS } from "../../src/config";
import { openTestApp, type TestApp } from "../support/app";
import { elementById, pageAs, signedInCookie, textOf } from "../support/console";
import { createAdminToken } from "../support/partner";

// The config page's groups, over the real app: every variable Herald reads is in exactly one named group (the
// group of its entry in CONFIG_SCHEMA), none falls into a catch-all, and a group's badge counts its own rows.

let h: TestApp;
afterEach(async () => {
  await h?.close();
});

test("every variable is shown once, in the group of its entry, and each group counts its rows", async () => {
  h = await openTestApp({ env: { ADMIN_TOKEN: "c".repeat(48), WEBHOOK_MAX_ATTEMPTS: "7", LOG_LEVEL: "silent" } });
  const cookie = await signedInCookie(h, await createAdminToken(h, "config-groups"));
  const { status, html } = await pageAs(h, "/admin/ops/config", cookie);
  expect(status).toBe(200);

  const sections = [...html.matchAll(/<section class="group" id="([^"]+)">/g)].map((m) => m[1]!);
  expect(sections).not.toContain("group-other");
  const groupOf = new Map<string, string>();
  for (const id of sections) {
    const section = elementById(html, id)!;
    const names = [...section.matchAll(/<tr id="var-([A-Z0-9_]+)"/g)].map((m) => m[1]!);
    expect(textOf(/<h2>[\s\S]*?<\/h2>/.exec(section)![0])).toContain(`${names.length} variables`);
    for (const name of names) {
      expect(groupOf.has(name), `${name} shown twice`).toBe(false);
      groupOf.set(name, id);
    }
  }
  expect([...groupOf.keys()].sort()).toEqual(Object.keys(CONFIG_VARS).sort());

  // A few by what they govern: a nested entry's variables stay together, the top-level ones sit where declared.
  expect(groupOf.get("WEBHOOK_MAX_ATTEMPTS")).toBe("group-webhooks");
  expect(groupOf.get("WEBHOOK_RETENTION_DAYS")).toBe("group-webhooks");
  expect(groupOf.get("DATABASE_URL")).toBe("group-postgresql-and-instances");
  expect(groupOf.get("HERALD_INSTANCE_ID")).toBe("group-postgresql-and-instances");
  expect(groupOf.get("LINK_INBOX_CRON")).toBe("group-link-inbox");
  expect(groupOf.get("MESSENGER_RATE_LIMIT_PLAYER_PER_MIN")).toBe("group-messenger");
  expect(groupOf.get("PARTNER_SANDBOX_RATE_LIMIT_PER_MINUTE")).toBe("group-rate-limits");
  expect(groupOf.get("JOB_SCHEDULES")).toBe("group-jobs-request-log-and-backups");
  expect(elementById(html, "group-webhooks")).toContain("1 changed");
});
