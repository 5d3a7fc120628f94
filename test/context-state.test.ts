import { afterEach, expect, test } from "bun:test";
import { linkInboxSender } from "../src/ops/link-inbox/outbox";
import { incidentListeners } from "../src/status/service";
import { openTestApp, type TestApp } from "./support/app";

// Per-context state (AppContext.state): a module's sender, store or listener set is made on first use inside the
// context it belongs to, is the same object for that context every time, and is never shared by two contexts in
// one process (two test apps, or a CLI command beside a server). state.names() says what a context holds.

const apps: TestApp[] = [];
afterEach(async () => {
  while (apps.length) await apps.pop()!.close();
});

test("one value per context, made on first use, never shared between two contexts", async () => {
  const a = await openTestApp();
  const b = await openTestApp();
  apps.push(a, b);
  expect(linkInboxSender(a.ctx)).toBe(linkInboxSender(a.ctx));
  expect(linkInboxSender(a.ctx)).not.toBe(linkInboxSender(b.ctx));
  expect(a.ctx.state.names()).toContain("link-inbox sender");
  // Building an app subscribes the link inbox to that context's incident events only.
  expect(incidentListeners(a.ctx).size).toBe(1);
  expect(incidentListeners(a.ctx)).not.toBe(incidentListeners(b.ctx));
  const before = incidentListeners(b.ctx).size;
  incidentListeners(a.ctx).add(() => {});
  expect(incidentListeners(b.ctx).size).toBe(before);
});
