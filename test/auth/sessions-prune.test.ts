import { afterEach, beforeEach, expect, test } from "bun:test";
import { openTestApp, type TestApp } from "../support/app";
import { FakeClock } from "../support/clock";
import { BROWSER_ACCEPT, signedInCookie } from "../support/console";
import { createAdminToken } from "../support/partner";

// Operator sessions do not pile up (issue 53, item 3): the auth-prune job (src/auth/jobs.ts, every 10 minutes)
// deletes the sessions past their expiry and those revoked more than a day ago, and keeps the live ones — their
// cookies keep working — and those revoked within the day (GET /admin/sessions still shows who signed out when).
// Driven by the test clock through the real sign-in form, on both engines.

const T0 = "2026-01-01T00:00:00.000Z";
const TTL_SECONDS = 28_800; // ADMIN_SESSION_TTL_SECONDS's default
const DAY_SECONDS = 86_400;

let h: TestApp;
let bearer: Record<string, string>;
let token: string;
beforeEach(async () => {
  h = await openTestApp({ clock: new FakeClock(T0) });
  token = await createAdminToken(h, "ops");
  bearer = { authorization: `Bearer ${token}` };
});
afterEach(async () => {
  await h.close();
});

/** Signs in; the session's cookie and its public handle (the newest row of GET /admin/sessions). */
async function signIn() {
  const cookie = await signedInCookie(h, token);
  const list = await h.json("/admin/sessions?limit=1", { headers: bearer });
  return { cookie, id: list.body.sessions[0].id as string };
}
const revoke = async (id: string) => expect((await h.json(`/admin/sessions/${id}/revoke`, { method: "POST", headers: bearer })).status).toBe(200);
const storedHandles = async () =>
  (await h.ctx.store.all<{ handle: string }>("SELECT substr(session_hash, 1, 16) AS handle FROM admin_sessions ORDER BY created_at")).map((r) => r.handle);
const pageStatus = async (cookie: string) => (await h.request("/admin/ops/config", { headers: { cookie, accept: BROWSER_ACCEPT } })).status;

test("the auth-prune job is scheduled every 10 minutes and says what it deletes", async () => {
  const jobs = await h.json("/admin/jobs?limit=200", { headers: bearer });
  expect(jobs.body.jobs.find((j: { name: string }) => j.name === "auth-prune")).toMatchObject({
    pattern: "0 */10 * * * *",
    description: "Deletes expired nonces, idempotency records and operator sessions",
  });
});

test("the job deletes expired sessions and those revoked over a day ago; live and recently revoked ones stay", async () => {
  // Revoked long ago: signed in and out at T0, more than a day before the job runs.
  const oldRevoked = await signIn();
  await revoke(oldRevoked.id);
  h.clock.advanceSeconds(DAY_SECONDS - TTL_SECONDS);
  // Expired: signed in, then its lifetime passes.
  const expired = await signIn();
  h.clock.advanceSeconds(TTL_SECONDS + 1);
  // Live, and revoked just now.
  const live = await signIn();
  h.clock.advanceSeconds(1);
  const recentRevoked = await signIn();
  await revoke(recentRevoked.id);
  expect(await storedHandles()).toEqual([oldRevoked.id, expired.id, live.id, recentRevoked.id]);
  expect([await pageStatus(expired.cookie), await pageStatus(live.cookie)]).toEqual([303, 200]);

  const run = await h.json("/admin/jobs/auth-prune/run", { method: "POST", headers: bearer });
  expect(run.body.run).toMatchObject({ name: "auth-prune", ok: true });

  expect(await storedHandles()).toEqual([live.id, recentRevoked.id]);
  // The live session still opens pages; the list shows what is left, the recently revoked one inactive.
  expect(await pageStatus(live.cookie)).toBe(200);
  const listed = await h.json("/admin/sessions", { headers: bearer });
  expect(listed.body.sessions.map((s: { id: string; active: boolean }) => [s.id, s.active])).toEqual([
    [recentRevoked.id, false],
    [live.id, true],
  ]);

  // A day after the revocation and past the live one's expiry, the next run leaves nothing.
  h.clock.advanceSeconds(DAY_SECONDS);
  expect((await h.json("/admin/jobs/auth-prune/run", { method: "POST", headers: bearer })).body.run.ok).toBe(true);
  expect(await storedHandles()).toEqual([]);
});
