import { describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { pickWeighted, seedHash, shuffleFair } from "../../src/messenger/games/fair";
import { noHorizontalOverflow, servedForBrowser } from "../support/browser";
import { seededRng } from "../support/clock";
import { initDataFor, openMessengerApp, tmaPost } from "../messenger/support";
import { openAsPlayer } from "./support";

// The fairness check (GET /app/fairness) in real headless Chromium, JavaScript on, at a phone's width. The page's own
// algorithm (src/miniapp/browser/fair.ts, WebCrypto) agrees with the server's (src/messenger/games/fair.ts) on 1,000
// outcomes fed to it in the browser; a real spin is revealed from the mini-app and checked through the link it gives;
// a real grid's revealed layout is recomputed; a tampered seed and bad values are answered in words.

const served = servedForBrowser("test/miniapp/fairness.browser.test.ts", () => openMessengerApp(), undefined, { javaScript: true });
const { present, browser, base, app: h } = served;

/** The fairness page (or any path) in a plain browser: the check needs no player. */
const newPage = (path: string, width = 390) => openAsPlayer(browser, `${base()}${path}`, null, { width, reducedMotion: true });

/** In the mini-app: spin, reveal the seed, follow the check link; resolves on the check page with its result. */
async function spinRevealAndCheck(page: Page, checkUrl: RegExp): Promise<void> {
  await page.locator("body[data-loaded]").waitFor();
  await page.click("#spin");
  await page
    .locator("#wheel-msg")
    .filter({ hasText: /won|no prize/ })
    .waitFor();
  await page.click("#reveal");
  await page.locator("#check-link").waitFor({ state: "visible" });
  await page.click("#check-link");
  await page.waitForURL(checkUrl);
  await page.locator("#result[data-state]").waitFor();
}

const resultState = (page: Page) => page.locator("#result").getAttribute("data-state");

describe.skipIf(!present)("the fairness check page", () => {
  test("its algorithm agrees with the server's on 1,000 outcomes, run in the browser", async () => {
    // The same 1,000 cases every run.
    const rng = seededRng("fairness-page");
    const hex = (bytes: number) => Buffer.from(rng.bytes(bytes)).toString("hex");
    const wheels = [
      [40, 25, 5, 15, 10, 5],
      [1, 1],
      [7, 3, 90],
      [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
    ];
    const cases = Array.from({ length: 1000 }, (_, i) => {
      const serverSeed = hex(32);
      const clientSeed = i % 3 === 0 ? hex(8) : `player seed ${i}: ünïcode ✓`;
      const nonce = Buffer.from(rng.bytes(2)).readUInt16BE() % 5000;
      const weights = wheels[i % wheels.length]!;
      const grid = i % 4 === 3;
      return {
        input: { game: grid ? "grid" : "wheel", serverSeed, hash: seedHash(serverSeed), clientSeed, nonce: String(nonce), weights: weights.join(", ") },
        segment: grid ? null : pickWeighted(weights, serverSeed, clientSeed, nonce),
        layout: grid ? shuffleFair([...Array(25).keys()], serverSeed, clientSeed, nonce) : null,
      };
    });
    const { page, refused } = await newPage("/app/fairness");
    const answers = await page.evaluate(
      async (inputs) => {
        const fair = (globalThis as unknown as { heraldFair: { verify: (i: unknown) => Promise<Record<string, unknown>> } }).heraldFair;
        return Promise.all(inputs.map((input) => fair.verify(input)));
      },
      cases.map((c) => c.input),
    );
    expect(answers).toHaveLength(1000);
    const disagreements = cases.filter(
      (c, i) =>
        !(
          answers[i]!.ok === true &&
          answers[i]!.hashMatches === true &&
          answers[i]!.segment === c.segment &&
          JSON.stringify(answers[i]!.layout) === JSON.stringify(c.layout)
        ),
    );
    expect(disagreements.map((c) => c.input)).toEqual([]);
    expect(cases.filter((c) => c.layout !== null).length).toBe(250);
    expect(refused).toEqual([]);
    await page.close();
  });

  test("a real spin: played and revealed in the mini-app, checked through the link it gives", async () => {
    const player = 8101;
    const { page } = await openAsPlayer(browser, `${base()}/app`, initDataFor(h(), { id: player }), { reducedMotion: true });
    await spinRevealAndCheck(page, /\/app\/fairness#/);
    const spin = await h().ctx.store.get<{ segment_index: number }>(
      "SELECT segment_index FROM messenger_spins WHERE telegram_user_id = ? ORDER BY id DESC LIMIT 1",
      [player],
    );
    expect(await resultState(page)).toBe("done");
    expect(await page.locator("#result").getAttribute("data-segment")).toBe(String(spin!.segment_index));
    expect(await page.locator("#result").innerText()).toContain("The server seed matches the hash shown before play");
    expect(await page.locator("#result").getAttribute("data-verdict")).toBe("fair");
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "fairness-spin-390.png");

    // The same values with one character of the seed changed: the mismatch, in words.
    const url = new URL(page.url());
    const fragment = new URLSearchParams(url.hash.slice(1));
    const seed = fragment.get("server_seed")!;
    fragment.set("server_seed", (seed[0] === "0" ? "1" : "0") + seed.slice(1));
    await page.goto(`${base()}/app/fairness#${fragment}`, { waitUntil: "load" });
    await page.reload({ waitUntil: "load" });
    await page.locator("#result[data-state]").waitFor();
    expect(await resultState(page)).toBe("mismatch");
    expect(await page.locator("#result h2").innerText()).toBe("✘ Not verified");
    expect(await page.locator("#result").innerText()).toContain("does NOT match the committed hash");

    // The right seed, but the game said it landed elsewhere: not what these seeds give, and said so.
    fragment.set("server_seed", seed);
    fragment.set("shown", String((spin!.segment_index + 1) % 6));
    await page.goto(`${base()}/app/fairness#${fragment}`, { waitUntil: "load" });
    await page.reload({ waitUntil: "load" });
    await page.locator("#result[data-state]").waitFor();
    expect(await page.locator("#result").getAttribute("data-verdict")).toBe("unfair");
    expect(await page.locator("#result").innerText()).toContain("that is NOT what these seeds give");
    await page.close();
  });

  test("under another path (MESSENGER_MINI_APP_PATH=/play): the revealed spin's link opens /play/fairness", async () => {
    const other = await openMessengerApp({ env: { MESSENGER_MINI_APP_PATH: "/play" } });
    const listening = other.app.listen({ hostname: "127.0.0.1", port: 0 });
    try {
      const { page } = await openAsPlayer(browser, `http://127.0.0.1:${listening.server!.port}/play`, initDataFor(other, { id: 8201 }), {
        reducedMotion: true,
      });
      await spinRevealAndCheck(page, /\/play\/fairness#/);
      expect(await resultState(page)).toBe("done");
      await page.close();
    } finally {
      await listening.stop(true);
      await other.close();
    }
  });

  test("a real grid, abandoned so its seed is revealed: the page draws the layout the server used", async () => {
    const init = initDataFor(h(), { id: 8102 });
    const post = (path: string, body: unknown) => h().json(`/api/messenger/games/recon-grid/${path}`, tmaPost(init, body));
    const status = await post("status", {});
    expect(status.status).toBe(200);
    expect((await post("start", { client_seed: "grid-seed-8102", next_server_seed_hash: status.body.next_server_seed_hash })).status).toBe(200);
    const again = await post("start", { abandon_active: true });
    expect(again.status).toBe(200);
    const f = again.body.abandoned_grid.fairness as { server_seed: string; server_seed_hash: string; client_seed: string; nonce: number; layout: number[] };
    expect(f.layout).toHaveLength(25);
    const fragment = new URLSearchParams({
      game: "grid",
      server_seed: f.server_seed,
      hash: f.server_seed_hash,
      client_seed: f.client_seed,
      nonce: String(f.nonce),
    });
    const { page, refused } = await newPage(`/app/fairness#${fragment}`, 360);
    await page.locator("#result[data-state]").waitFor();
    expect(await resultState(page)).toBe("done");
    expect(await page.locator("#result").getAttribute("data-layout")).toBe(f.layout.join(","));
    expect(await page.locator("#layout li").count()).toBe(25);
    expect(await page.locator("#layout li.prize").count()).toBe(10);
    await noHorizontalOverflow(page);
    await browser.screenshot(page, "fairness-grid-360.png");
    expect(refused).toEqual([]);
    await page.close();
  });

  test("by hand: bad values are named in words and nothing is computed; the keyboard reaches every field", async () => {
    const { page } = await newPage("/app/fairness");
    await page.fill("#server-seed", "not a seed");
    await page.fill("#client-seed", "x");
    await page.fill("#nonce", "-1");
    await page.fill("#weights", "40, zero");
    await page.press("#weights", "Enter");
    await page.locator("#result[data-state]").waitFor();
    expect(await resultState(page)).toBe("invalid");
    const text = await page.locator("#result").innerText();
    for (const words of ["server seed must be 64 lower-case hex", "nonce must be a whole number", "weights must be 2 to 100 whole numbers"])
      expect(text).toContain(words);
    expect(await page.locator("#result").getAttribute("data-verdict")).toBe("");
    // Every field has its label (a screen reader names it) and is reached with Tab.
    for (const id of ["game", "server-seed", "hash", "client-seed", "nonce", "weights"]) expect(await page.locator(`label[for="${id}"]`).count()).toBe(1);
    await page.close();
  });
});
