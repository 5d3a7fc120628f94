import { describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { ed25519 } from "@noble/curves/ed25519";
import { Keypair } from "@solana/web3.js";
import { initDataFor, openMessengerApp } from "../messenger/support";
import { noHorizontalOverflow, servedForBrowser } from "../support/browser";
import { asOperator, expectBalancesAsLedger, openAsPlayer } from "./support";

// The players' mini-app (GET /app) in real headless Chromium with JavaScript on, at a phone's width, from a real
// server on 127.0.0.1, as Telegram opens it (window.Telegram.WebApp carrying init data signed with the test bot's
// token): a grid played to the end and checked, a wallet linked through the Wallet Standard, and a plain browser
// outside Telegram. A brand-new player's first session is test/miniapp/first-session.browser.test.ts; every screen's
// accessibility, test/miniapp/screens.browser.test.ts.

const PLAYER = 7001;
const served = servedForBrowser("test/miniapp/app.browser.test.ts", () => openMessengerApp(), undefined, { javaScript: true });
const { present, browser, base, app: h } = served;

/** The mini-app as Telegram opens it for the player of `initData` (none: a plain browser). */
const openAs = (initData: string | null, width = 390) => openAsPlayer(browser, `${base()}/app`, initData, { width, reducedMotion: true });
const text = (page: Page, selector: string) => page.locator(selector).innerText();

describe.skipIf(!present)("the players' mini-app", () => {
  test("a grid played to the end: missiles bought, cells revealed until every prize is found, the ledger agrees, the check recomputes it", async () => {
    await asOperator(h(), "/api/messenger/admin/games/promos", { code: "GRID-FULL", reward: { points: 500 }, max_claims: 10 });
    const player = PLAYER + 15;
    const { page, refused } = await openAs(initDataFor(h(), { id: player }));
    await page.locator("body[data-loaded]").waitFor();
    await page.fill("#promo-code", "GRID-FULL");
    await page.click("#promo-claim");
    await page.locator("#promo-msg.good").waitFor();
    await page.click("#grid-start");
    await page.locator("#cell-0").waitFor();
    // 25 missiles at most are needed (the grid's 25 cells); prizes of missiles need fewer.
    for (let bought = 0; bought < 5; bought++) {
      const before = await text(page, "#missiles");
      await page.click("#buy-5");
      await page.locator("#missiles", { hasText: String(Number(before) + 5) }).waitFor();
    }
    let reveals = 0;
    for (let cell = 0; cell < 25; cell++) {
      if (await page.locator(`#cell-${cell}`).isDisabled()) continue;
      await page.click(`#cell-${cell}`);
      reveals++;
      await page.locator("#grid-msg", { hasText: `Cell ${cell + 1}:` }).waitFor();
      if ((await text(page, "#grid-msg")).includes("the grid is complete")) break;
    }
    expect(await text(page, "#grid-msg")).toContain("Every prize found: the grid is complete");
    // The grid ended: the next one can be started; the server recorded every reveal and the grid as complete.
    await page.locator("#grid-start").waitFor({ state: "visible" });
    const grid = await h().ctx.store.get<{ status: string; revealed: string; layout: string }>(
      "SELECT status, revealed, layout FROM messenger_grids WHERE telegram_user_id = ? ORDER BY id DESC LIMIT 1",
      [player],
    );
    expect(grid!.status).toBe("completed");
    expect(JSON.parse(grid!.revealed)).toHaveLength(reveals);
    await expectBalancesAsLedger(page, h(), player);
    // The ended grid's seed is revealed: its check recomputes the layout the server laid out.
    await page.click("#grid-check");
    await page.waitForURL(/\/app\/fairness#/);
    await page.locator("#result[data-state]").waitFor();
    expect(await page.locator("#result").getAttribute("data-state")).toBe("done");
    expect(await text(page, "#result h2")).toBe("✔ Fair grid");
    expect(await page.locator("#result").getAttribute("data-layout")).toBe((JSON.parse(grid!.layout) as number[]).join(","));
    expect(refused).toEqual([]);
    await page.close();
  }, 60_000);

  test("a game a catalog campaign keeps from the player: the page says it is not open to them and offers no start (the catalog's open_to_you)", async () => {
    const player = PLAYER + 45;
    await asOperator(h(), "/api/messenger/admin/games/audience-groups", {
      group_key: "grid-beta",
      title: "Grid beta",
      rule: { telegram_user_ids: [PLAYER + 46] },
    });
    const { campaign } = await asOperator(h(), "/api/messenger/admin/games/catalog-campaigns", {
      game_key: "recon_grid",
      audience_group: "grid-beta",
      title: "Grid beta",
    });
    try {
      const { page, refused } = await openAs(initDataFor(h(), { id: player }));
      await page.locator("body[data-loaded]").waitFor();
      await page.locator("#grid-note", { hasText: "The recon grid is not open to you right now." }).waitFor();
      expect(await page.locator("#grid-start").isHidden()).toBe(true);
      // The wheel, open to everyone, is offered as before.
      expect(await page.locator("#spin").isVisible()).toBe(true);
      expect(await text(page, "#spin-note")).not.toContain("not open to you");
      expect(refused).toEqual([]);
      await page.close();
    } finally {
      // The other tests of this file share the server: the grid opens to everyone again.
      await asOperator(h(), "/api/messenger/admin/games/catalog-campaigns", { id: campaign.id, enabled: false });
    }
  }, 60_000);

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
    await page.locator("body[data-loaded]").waitFor();
    expect(await page.locator("#wallets-none").isVisible()).toBe(false);
    await page.click("#wallet-0");
    await page.locator("#wallet-msg.good").waitFor();
    expect(await text(page, "#wallet-msg")).toBe(`Wallet ${address} is linked to your account.`);
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
    await page.locator("body[data-loaded]").waitFor();
    expect(await page.locator("#wallets button").count()).toBe(0);
    expect(await text(page, "#wallets-none")).toContain("No Solana wallet was found in this browser");
    await page.close();
  });

  test("outside Telegram: the page says where to open it, makes no Telegram call, and init data pasted for development works", async () => {
    const { page, refused } = await openAs(null, 360);
    await page.locator("#outside").waitFor({ state: "visible" });
    expect(await text(page, "#outside")).toContain("Open this page from the bot in Telegram.");
    expect(await page.evaluate(() => "Telegram" in globalThis)).toBe(false);
    // Pasted init data of a Russian-speaking player: the page switches to the player's language.
    await page.fill("#paste", initDataFor(h(), { id: PLAYER + 3, language_code: "ru" }));
    await page.click("#paste-form button");
    await page.locator("body[data-loaded]").waitFor();
    expect(await text(page, "#points")).toBe("0");
    expect(await text(page, "h1")).toBe("Игры");
    await noHorizontalOverflow(page);
    expect(refused).toEqual([]);
    await page.close();
  });
});
