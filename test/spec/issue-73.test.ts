// Issue 73 (the players' mini-app as a game), re-verified for a returning player, as the outside checks play it
// ("as new and returning players"): one who opened the gift, spun and left a grid half played comes back to /app.
// "Every action a player can see is one they can take, or it is visibly unavailable with the reason", and the
// balances are the ledger's. (test/miniapp/first-session.browser.test.ts plays a first session in one page load.)
import { describe, expect, test } from "bun:test";
import { initDataFor, openMessengerApp, tmaPost } from "../messenger/support";
import { expectBalancesAsLedger, openAsPlayer } from "../miniapp/support";
import { servedForBrowser } from "../support/browser";

const served = servedForBrowser("test/spec/issue-73.test.ts", () => openMessengerApp(), undefined, { javaScript: true });
const { present, browser, base, app: h } = served;

describe.skipIf(!present)("a returning player", () => {
  test("comes back to a grid left half played: the page shows it with its revealed cell, offers no new start, and a reveal works", async () => {
    const player = 7301;
    const post = (path: string, body: unknown = {}) => h().json(path, tmaPost(initDataFor(h(), { id: player, language_code: "en" }), body));
    expect((await post("/api/messenger/games/welcome-gift/open")).status).toBe(200);
    expect((await post("/api/messenger/games/spin-wheel/play", { request_id: "returning-spin-1" })).status).toBe(200);
    expect((await post("/api/messenger/games/recon-grid/status")).status).toBe(200); // publishes the seed hash, as the page does
    const started = await post("/api/messenger/games/recon-grid/start");
    expect(started.status).toBe(200);
    const gridId = started.body.grid.grid_id as number;
    expect((await post("/api/messenger/games/recon-grid/reveal", { request_id: "returning-r-0", grid_id: gridId, cell: 0 })).status).toBe(200);
    h().clock.advance(26 * 3_600_000); // the next day

    const { page, refused } = await openAsPlayer(browser, `${base()}/app`, initDataFor(h(), { id: player, language_code: "en" }));
    await page.locator("body[data-loaded]").waitFor();
    await page.locator("#cell-24").waitFor();
    expect(await page.locator("#grid-start").isVisible()).toBe(false);
    expect(await page.locator("#cell-0").isDisabled()).toBe(true);
    expect(await page.locator("#board button:enabled").count()).toBe(24);
    await expectBalancesAsLedger(page, h(), player);
    // Yesterday's free spin is back, and the spin is offered.
    expect(await page.locator("#spin").isEnabled()).toBe(true);

    await page.click("#cell-1");
    await page.locator("#grid-msg", { hasText: /^Cell 2: / }).waitFor();
    await expectBalancesAsLedger(page, h(), player);
    expect(refused).toEqual([]);
    await page.close();
  }, 60_000);
});
