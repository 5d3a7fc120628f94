import { describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { jsonInit } from "../support/app";
import { noHorizontalOverflow, servedForBrowser } from "../support/browser";
import { createAdminToken } from "../support/partner";
import { ed25519 } from "@noble/curves/ed25519";
import { Keypair } from "@solana/web3.js";
import { initDataFor, openMessengerApp } from "../messenger/support";
import { openAsPlayer } from "./support";

// The players' mini-app (GET /app) in real headless Chromium with JavaScript on, at a phone's width, from a real
// server on 127.0.0.1, as Telegram opens it: window.Telegram.WebApp carries init data signed with the test bot's
// token (what Telegram's script provides inside the chat). A player sees the balance and the wheel with its
// commitment, spins, and the page's numbers are the ledger's; a second spin without a spin in hand is not offered;
// expired init data is refused in words with what to do; outside Telegram the page says where to open it. The
// page's Content-Security-Policy refuses nothing it uses. Screenshots: a temp dir, or OPS_SCREENSHOT_DIR.

const PLAYER = 7001;
const served = servedForBrowser("test/miniapp/app.browser.test.ts", () => openMessengerApp(), undefined, { javaScript: true });
const { present, browser, base, app: h } = served;

/** The mini-app as Telegram opens it for the player of `initData` (none: a plain browser). */
const openAs = (initData: string | null, width = 390) => openAsPlayer(browser, `${base()}/app`, initData, { width });

const text = (page: Page, selector: string) => page.locator(selector).innerText();
/** Text inside the closed <details> (fairness), which innerText reads as empty. */
const content = async (page: Page, selector: string) => (await page.locator(selector).textContent()) ?? "";

/** The player's balances as the ledger says: the last row's running totals (0 without a row). */
async function ledger(player: number) {
  const row = await h().ctx.store.get<{ free_spin_after: number; missile_after: number; points_after: number }>(
    "SELECT free_spin_after, missile_after, points_after FROM messenger_ledger WHERE telegram_user_id = ? ORDER BY id DESC LIMIT 1",
    [player],
  );
  return { spins: String(row?.free_spin_after ?? 0), missiles: String(row?.missile_after ?? 0), points: String(row?.points_after ?? 0) };
}

describe.skipIf(!present)("the players' mini-app", () => {
  test("a player sees the balance and the committed wheel, spins, and the page shows what the ledger says", async () => {
    const { page, refused } = await openAs(initDataFor(h(), { id: PLAYER, first_name: "Ada" }));
    await page.locator("#game").waitFor({ state: "visible" });
    expect(await text(page, "#points")).toBe("0");
    expect(await page.locator("#segments li").count()).toBe(6);
    const commitment = await content(page, "#commitment");
    expect(commitment).toMatch(/^[0-9a-f]{64}$/);
    expect(await content(page, "#nonce")).toBe("0");
    expect(await text(page, "#spin-note")).toBe("Your daily free spin is ready.");
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "mini-app-390.png");

    await page.click("#spin");
    await page.locator("#result").filter({ hasText: "you won" }).waitFor();
    // The segment the page highlights is the one the server recorded, under the hash the page showed before the spin.
    const spin = await h().ctx.store.get<{ segment_index: number; nonce: number }>(
      "SELECT segment_index, nonce FROM messenger_spins WHERE telegram_user_id = ? ORDER BY id DESC LIMIT 1",
      [PLAYER],
    );
    expect(await page.locator("#segments li.won").getAttribute("id")).toBe(`segment-${spin!.segment_index}`);
    expect(await text(page, "#result-fairness")).toContain(`Committed hash ${commitment}`);
    const expected = await ledger(PLAYER);
    expect({ points: await text(page, "#points"), spins: await text(page, "#spins"), missiles: await text(page, "#missiles") }).toEqual(expected);
    expect(await content(page, "#nonce")).toBe("1");
    // The daily free spin is used; a spin in hand (a Free spin segment) is offered, nothing else.
    const spinsInHand = Number(expected.spins);
    expect(await page.locator("#spin").isDisabled()).toBe(spinsInHand === 0);
    if (spinsInHand === 0) expect(await text(page, "#spin-note")).toStartWith("Next free spin at ");
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "mini-app-after-spin-390.png");
    expect(refused).toEqual([]);
    await page.close();
  });

  test("a promo code is claimed once (the second claim is refused in words), then its points buy missiles for a grid", async () => {
    const token = await createAdminToken(h());
    const created = await h().json(
      "/api/messenger/admin/games/promos",
      jsonInit("POST", { code: "WELCOME-140", reward: { points: 140 }, max_claims: 10 }, { authorization: `Bearer ${token}` }),
    );
    expect(created.status).toBe(200);
    const player = PLAYER + 10;
    const { page, refused } = await openAs(initDataFor(h(), { id: player }));
    await page.locator("#game").waitFor({ state: "visible" });
    await page.fill("#promo-code", "WELCOME-140");
    await page.click("#promo-form button");
    await page.locator("#promo-result.good").waitFor();
    expect(await text(page, "#promo-result")).toBe("Code WELCOME-140 applied: you got 140 points.");
    expect(await text(page, "#points")).toBe("140");
    await page.click("#promo-form button");
    await page.locator("#promo-result.bad").waitFor();
    expect(await text(page, "#promo-result")).toContain("each code works once per player");
    expect(await text(page, "#points")).toBe("140");

    // The grid: start one, buy five missiles with 100 of the points, reveal a cell.
    await page.click("#grid-start");
    await page.locator("#cell-0").waitFor();
    expect(await page.locator("#board button").count()).toBe(25);
    await page.click("#buy-missiles");
    await page.locator("#grid-note", { hasText: "you have 5 missiles" }).waitFor();
    expect(await text(page, "#points")).toBe("40");
    await page.click("#cell-12");
    await page.locator("#grid-result", { hasText: "Cell 13" }).waitFor();
    expect(await page.locator("#cell-12").isDisabled()).toBe(true);
    expect(await text(page, "#cell-12")).not.toBe("?");
    const expected = await ledger(player);
    expect({ points: await text(page, "#points"), spins: await text(page, "#spins"), missiles: await text(page, "#missiles") }).toEqual(expected);
    // Five bought, one spent on the reveal, two more if the cell held them.
    expect(expected.missiles).toBe((await text(page, "#cell-12")) === "2 missiles" ? "6" : "4");
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "mini-app-grid-390.png");
    expect(refused).toEqual([]);
    await page.close();
  });

  test("a grid played to the end: missiles bought, cells revealed until every prize is found, the ledger agrees", async () => {
    const token = await createAdminToken(h());
    const created = await h().json(
      "/api/messenger/admin/games/promos",
      jsonInit("POST", { code: "GRID-FULL", reward: { points: 500 }, max_claims: 10 }, { authorization: `Bearer ${token}` }),
    );
    expect(created.status).toBe(200);
    const player = PLAYER + 15;
    const { page, refused } = await openAs(initDataFor(h(), { id: player }));
    await page.locator("#game").waitFor({ state: "visible" });
    await page.fill("#promo-code", "GRID-FULL");
    await page.click("#promo-form button");
    await page.locator("#promo-result.good").waitFor();
    await page.click("#grid-start");
    await page.locator("#cell-0").waitFor();
    // 25 missiles at most are needed (the grid's 25 cells); prizes of missiles need fewer.
    for (let bought = 0; bought < 5; bought++) {
      const before = await text(page, "#missiles");
      await page.click("#buy-missiles");
      await page.locator("#missiles", { hasText: String(Number(before) + 5) }).waitFor();
    }
    let reveals = 0;
    for (let cell = 0; cell < 25; cell++) {
      if ((await page.locator("#grid-start").isVisible()) || (await page.locator(`#cell-${cell}`).isDisabled())) continue;
      await page.click(`#cell-${cell}`);
      reveals++;
      await page.locator("#grid-result", { hasText: `Cell ${cell + 1}:` }).waitFor();
      if ((await text(page, "#grid-result")).includes("The grid is complete")) break;
    }
    expect(await text(page, "#grid-result")).toContain("The grid is complete");
    // The grid ended: the next one can be started; the server recorded every reveal and the grid as complete.
    expect(await page.locator("#grid-start").isVisible()).toBe(true);
    const grid = await h().ctx.store.get<{ status: string; revealed: string }>(
      "SELECT status, revealed FROM messenger_grids WHERE telegram_user_id = ? ORDER BY id DESC LIMIT 1",
      [player],
    );
    expect(grid!.status).toBe("completed");
    expect(JSON.parse(grid!.revealed)).toHaveLength(reveals);
    const expected = await ledger(player);
    expect({ points: await text(page, "#points"), spins: await text(page, "#spins"), missiles: await text(page, "#missiles") }).toEqual(expected);
    // The ended grid's seed is revealed: its check recomputes the layout the server laid out.
    await page.click("#grid-check");
    await page.waitForURL(/\/app\/fairness#/);
    await page.locator("#result[data-state]").waitFor();
    expect(await page.locator("#result").getAttribute("data-state")).toBe("done");
    const layout = await h().ctx.store.get<{ layout: string }>("SELECT layout FROM messenger_grids WHERE telegram_user_id = ? ORDER BY id DESC LIMIT 1", [
      player,
    ]);
    expect(await page.locator("#result").getAttribute("data-layout")).toBe((JSON.parse(layout!.layout) as number[]).join(","));
    expect(refused).toEqual([]);
    await page.close();
  });

  test("a server-counted mission: joined, moved on by the game's own count, paid once", async () => {
    const token = await createAdminToken(h());
    const admin = (path: string, body: unknown) => h().json(path, jsonInit("POST", body, { authorization: `Bearer ${token}` }));
    expect((await admin("/api/messenger/admin/games/promos", { code: "MISSION-DAY", reward: { points: 5 }, max_claims: 10 })).status).toBe(200);
    const mission = {
      mission_key: "claim-1",
      title: "Claim a promo code",
      event_type: "promo.claim",
      target: 1,
      reward: { points: 25 },
      daily_cap: 2,
      per_minute_cap: 2,
    };
    expect((await admin("/api/messenger/admin/missions", mission)).status).toBe(200);
    const player = PLAYER + 20;
    const { page, refused } = await openAs(initDataFor(h(), { id: player }));
    await page.locator("#mission-claim-1").waitFor();
    expect(await text(page, "#mission-status-claim-1")).toBe("Not joined yet (0 of 1).");
    await page.click("#mission-action-claim-1");
    await page.locator("#mission-status-claim-1", { hasText: "0 of 1." }).waitFor();
    // Asking before the game has counted anything moves nothing.
    await page.click("#mission-action-claim-1");
    await page.locator("#mission-result", { hasText: /./ }).waitFor();
    expect(await text(page, "#mission-status-claim-1")).toBe("0 of 1.");
    // The event the mission counts, then the progress: done and paid.
    await page.fill("#promo-code", "MISSION-DAY");
    await page.click("#promo-form button");
    await page.locator("#promo-result.good").waitFor();
    await page.click("#mission-action-claim-1");
    await page.locator("#mission-result", { hasText: "done: you got 25 points" }).waitFor();
    await page.locator("#mission-status-claim-1", { hasText: "reward paid" }).waitFor();
    expect(await page.locator("#mission-action-claim-1").count()).toBe(0);
    expect(await text(page, "#points")).toBe("30");
    // Paid once: one ledger row for the mission, and the balances are the ledger's.
    const payouts = await h().ctx.store.get<{ n: number }>(
      "SELECT count(*) AS n FROM messenger_ledger WHERE telegram_user_id = ? AND action LIKE '%mission%'",
      [player],
    );
    expect(payouts!.n).toBe(1);
    // The history, newest first: the mission's reward, then the promo code.
    await page.locator("#history li", { hasText: "Mission reward: +25 points" }).waitFor();
    const history = await page.locator("#history li").allInnerTexts();
    expect(history.map((line) => line.split(" · ")[1])).toEqual(["Mission reward: +25 points", "Promo code: +5 points"]);
    const expected = await ledger(player);
    expect({ points: await text(page, "#points"), spins: await text(page, "#spins"), missiles: await text(page, "#missiles") }).toEqual(expected);
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "mini-app-mission-390.png");
    expect(refused).toEqual([]);
    await page.close();
  });

  test("a wallet is linked through the Wallet Standard: connect, sign the challenge, verified by the server", async () => {
    const player = PLAYER + 30;
    const keypair = Keypair.generate();
    const address = keypair.publicKey.toBase58();
    // A wallet as a browser extension would register it (Wallet Standard events); it signs with the test's keypair,
    // held outside the page. What it was asked to sign is kept for the check below.
    const signed: string[] = [];
    const registerWallet = async (page: Page) => {
      await page.exposeFunction("testWalletSign", (bytes: number[]) => {
        const message = new Uint8Array(bytes);
        signed.push(new TextDecoder().decode(message));
        return Array.from(ed25519.sign(message, keypair.secretKey.slice(0, 32)));
      });
      await page.addInitScript((address: string) => {
        type Api = { register: (w: unknown) => void };
        const g = globalThis as unknown as Record<string, unknown> & {
          addEventListener: (type: string, listener: (e: { detail: Api }) => void) => void;
          dispatchEvent: (e: Event) => boolean;
        };
        const account = { address, publicKey: new Uint8Array(32), chains: ["solana:mainnet"], features: ["solana:signMessage"] };
        const wallet = {
          version: "1.0.0",
          name: "Test Wallet",
          icon: "data:image/svg+xml;base64,PHN2Zy8+",
          chains: ["solana:mainnet"],
          accounts: [account],
          features: {
            "standard:connect": { version: "1.0.0", connect: async () => ({ accounts: [account] }) },
            "solana:signMessage": {
              version: "1.0.0",
              signMessage: async ({ message }: { message: Uint8Array }) => {
                const sign = (g as unknown as { testWalletSign: (b: number[]) => Promise<number[]> }).testWalletSign;
                return [{ signedMessage: message, signature: new Uint8Array(await sign(Array.from(message))) }];
              },
            },
          },
        };
        const callback = ({ register }: Api) => register(wallet);
        g.addEventListener("wallet-standard:app-ready", (e) => callback(e.detail));
        g.dispatchEvent(new CustomEvent("wallet-standard:register-wallet", { detail: callback }));
      }, address);
    };
    const { page } = await openAsPlayer(browser, `${base()}/app`, initDataFor(h(), { id: player }), { before: registerWallet });
    await page.locator("#game").waitFor({ state: "visible" });
    expect(await page.locator("#wallets-none").isVisible()).toBe(false);
    await page.click("#wallet-0");
    await page.locator("#wallet-result.good").waitFor();
    expect(await text(page, "#wallet-result")).toBe(`Wallet ${address} is linked to your account.`);
    expect(signed).toHaveLength(1);
    expect(signed[0]).toContain(`wants you to sign in with your Solana account:\n${address}`);
    const proven = await h().ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM messenger_wallets WHERE telegram_user_id = ? AND address = ?", [
      player,
      address,
    ]);
    expect(proven!.n).toBe(1);
    await noHorizontalOverflow(page);
    await page.close();
  });

  test("no wallet in the browser: the page says so and offers no button", async () => {
    const { page } = await openAs(initDataFor(h(), { id: PLAYER + 31 }));
    await page.locator("#game").waitFor({ state: "visible" });
    expect(await page.locator("#wallets button").count()).toBe(0);
    expect(await text(page, "#wallets-none")).toContain("No Solana wallet was found in this browser");
    await page.close();
  });

  test("on the narrowest phone (360 px) the page needs no sideways scrolling", async () => {
    const { page } = await openAs(initDataFor(h(), { id: PLAYER + 1 }), 360);
    await page.locator("#game").waitFor({ state: "visible" });
    await noHorizontalOverflow(page);
    await page.close();
  });

  test("expired init data: the refusal in words, with what to do", async () => {
    const dayAgo = Math.floor(h().clock.now().getTime() / 1000) - 2 * 86_400;
    const { page } = await openAs(initDataFor(h(), { id: PLAYER + 2 }, {}, dayAgo));
    await page.locator("#error").waitFor({ state: "visible" });
    expect(await text(page, "#error")).toContain("close the mini-app and open it again from the bot");
    expect(await page.locator("#game").isVisible()).toBe(false);
    await page.close();
  });

  test("outside Telegram: the page says where to open it, and init data pasted for development works", async () => {
    const { page, refused } = await openAs(null);
    await page.locator("#outside").waitFor({ state: "visible" });
    expect(await text(page, "#outside")).toContain("Open this page from the bot in Telegram.");
    await page.fill("#paste", initDataFor(h(), { id: PLAYER + 3 }));
    await page.click("#paste-form button");
    await page.locator("#game").waitFor({ state: "visible" });
    expect(await text(page, "#points")).toBe("0");
    expect(refused).toEqual([]);
    await page.close();
  });
});
