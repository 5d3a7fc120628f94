import { describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { initDataFor, openMessengerApp } from "../messenger/support";
import { servedForBrowser } from "../support/browser";
import { asOperator, expectNoAxeViolations, openAsPlayer, shoot, TELEGRAM_THEMES } from "./support";

// The page's globals, as the callbacks handed to page.evaluate see them in the browser (the tests' own lib has no DOM).
declare const window: { scrollTo(x: number, y: number): void; scrollY: number };
declare const document: {
  documentElement: Element & { dataset: Record<string, string> };
  activeElement: Element | null;
  body: Element;
  querySelector(s: string): Element | null;
};
declare function getComputedStyle(el: unknown): {
  transform: string;
  transitionDuration: string;
  paddingTop: string;
  paddingBottom: string;
  getPropertyValue(name: string): string;
};
interface Element {
  id: string;
  tagName: string;
  textContent: string | null;
  getAttribute(name: string): string | null;
  getBoundingClientRect(): { top: number };
}

// Every screen of the mini-app (/app) and of its fairness check (/app/fairness), in the light and the dark theme at
// 390 px: axe-core finds no violation of WCAG 2.1 A/AA or its best practices (contrast, names, roles, keyboard), and
// each screen is photographed (MINIAPP_SCREENSHOT_DIR=docs/images writes the pictures docs/messenger.md shows). Then
// Telegram's own themes, whose hint grey is below 4.5:1 on white: the page moves it until it reads, and axe agrees;
// Telegram's safe-area insets pad the page; every control is reached with Tab and has a name.

/** A mission the game counts, for the missions screen. */
const SPIN_MISSION = {
  mission_key: "spin-2",
  title: "Spin the wheel twice",
  event_type: "spin_wheel.play",
  target: 2,
  reward: { points: 40, missiles: 2 },
  daily_cap: 10,
  per_minute_cap: 10,
};
const served = servedForBrowser(
  "test/miniapp/screens.browser.test.ts",
  () => openMessengerApp(),
  async (app) => {
    await asOperator(app, "/api/messenger/admin/missions", SPIN_MISSION);
  },
  { javaScript: true },
);
const { present, browser, base, app: h } = served;

const until = (page: Page, selector: string, hasText: string | RegExp) => page.locator(selector, { hasText }).waitFor();
/** Scrolls a section's heading to the top (under the sticky balances), as a player scrolls to it. */
const scrollTo = (page: Page, selector: string) =>
  page.locator(selector).evaluate((el) => {
    window.scrollTo(0, el.getBoundingClientRect().top + window.scrollY - 70);
  });

describe.skipIf(!present)("every screen, light and dark", () => {
  test.each(["light", "dark"] as const)(
    "%s: first screen, wheel, grid, missions, fairness, outside Telegram, a refused start",
    async (scheme) => {
      const suffix = scheme === "light" ? 0 : 1;
      const player = 7301 + suffix;
      const { page, refused } = await openAsPlayer(browser, `${base()}/app`, initDataFor(h(), { id: player, language_code: "en" }), {
        scheme,
        reducedMotion: true,
      });
      await page.locator("body[data-loaded]").waitFor();
      await expectNoAxeViolations(page, `${scheme}: first screen`);
      await shoot(page, `miniapp-first-${scheme}.png`);

      await page.click("#gift-open");
      await until(page, "#gift-msg.good", /Gift opened/);
      await page.click("#mission-action-spin-2");
      await page.click("#spin");
      await page
        .locator("#wheel-msg")
        .filter({ hasText: /won|no prize/ })
        .waitFor();
      await page.locator("#odds summary").click();
      await expectNoAxeViolations(page, `${scheme}: the wheel after a spin`);
      await scrollTo(page, "#wheel-title");
      await shoot(page, `miniapp-wheel-${scheme}.png`);

      await page.click("#grid-start");
      for (const cell of [6, 12, 18]) {
        await page.click(`#cell-${cell}`);
        await until(page, "#grid-msg", `Cell ${cell + 1}:`);
      }
      // The mission the spin moved, moved on the page by itself (after the plays' pause).
      await until(page, "#mission-status-spin-2", "1 of 2");
      await expectNoAxeViolations(page, `${scheme}: the grid in play`);
      await scrollTo(page, "#grid-title");
      await shoot(page, `miniapp-grid-${scheme}.png`);

      await page.fill("#promo-code", "NO-SUCH-CODE");
      await page.click("#promo-claim");
      await until(page, "#promo-msg.bad", "There is no such code");
      await expectNoAxeViolations(page, `${scheme}: missions, a refused code, history`);
      await scrollTo(page, "#missions-title");
      await shoot(page, `miniapp-missions-${scheme}.png`);

      await page.click("#reveal");
      await page.click("#check-link");
      await page.locator("#result[data-state]").waitFor();
      await expectNoAxeViolations(page, `${scheme}: fairness ✔`);
      await shoot(page, `miniapp-fairness-${scheme}.png`);
      await page.fill("#nonce", "-1");
      await page.click("#check button[type=submit]");
      await page.locator("#result[data-state=invalid]").waitFor();
      await expectNoAxeViolations(page, `${scheme}: fairness, values refused`);
      expect(refused).toEqual([]);
      await page.close();

      const outside = await openAsPlayer(browser, `${base()}/app`, null, { scheme });
      await outside.page.locator("#outside").waitFor({ state: "visible" });
      await expectNoAxeViolations(outside.page, `${scheme}: outside Telegram`);
      await outside.page.close();

      const expired = Math.floor(h().clock.now().getTime() / 1000) - 2 * 86_400;
      const old = await openAsPlayer(browser, `${base()}/app`, initDataFor(h(), { id: player }, {}, expired), { scheme });
      await old.page.locator("#load-error").waitFor({ state: "visible" });
      expect(await old.page.locator("#load-error").innerText()).toBe("Close the game and open it again from the bot.");
      await expectNoAxeViolations(old.page, `${scheme}: init data refused`);
      await old.page.close();
    },
    60_000,
  );

  test.each(["light", "dark"] as const)("Telegram's own %s theme: its low-contrast hint is made readable, axe agrees", async (scheme) => {
    const theme = TELEGRAM_THEMES[scheme];
    const player = 7311 + (scheme === "light" ? 0 : 1);
    const { page } = await openAsPlayer(browser, `${base()}/app`, initDataFor(h(), { id: player }), { scheme, theme, reducedMotion: true });
    await page.locator("body[data-loaded]").waitFor();
    const colors = await page.evaluate(() => {
      const css = getComputedStyle(document.documentElement);
      return {
        bg: css.getPropertyValue("--tg-theme-bg-color").trim(),
        hint: css.getPropertyValue("--hint").trim(),
        theme: document.documentElement.dataset.theme,
      };
    });
    expect(colors.bg).toBe(theme.bg_color);
    expect(colors.theme).toBe(scheme);
    if (scheme === "light") expect(colors.hint).not.toBe(theme.hint_color);
    await page.click("#gift-open");
    await until(page, "#gift-msg.good", /Gift opened/);
    await page.click("#grid-start");
    await page.click("#cell-0");
    await until(page, "#grid-msg", "Cell 1:");
    await expectNoAxeViolations(page, `Telegram ${scheme} theme`);
    await page.close();
  });

  test("safe areas: Telegram's insets pad the page; the keyboard reaches every control, each with a name", async () => {
    const { page } = await openAsPlayer(browser, `${base()}/app`, initDataFor(h(), { id: 7321 }), {
      safeArea: { top: 24, bottom: 34 },
      contentSafeArea: { top: 46, bottom: 0 },
    });
    await page.locator("body[data-loaded]").waitFor();
    const padding = await page.locator("#app").evaluate((el) => ({ top: getComputedStyle(el).paddingTop, bottom: getComputedStyle(el).paddingBottom }));
    expect(padding).toEqual({ top: `${8 + 24 + 46}px`, bottom: `${32 + 34}px` });
    // Tab through the page: every enabled control is reached, and each has an accessible name.
    const controls = await page.locator("button:visible:enabled, a[href]:visible, input:visible, textarea:visible, summary:visible").count();
    const reached = new Set<string>();
    for (let i = 0; i < controls + 5; i++) {
      await page.keyboard.press("Tab");
      const focused = await page.evaluate(() => {
        const el = document.activeElement;
        if (!el || el === document.body) return null;
        const name = el.getAttribute("aria-label") || (el.id && document.querySelector(`label[for="${el.id}"]`)?.textContent) || el.textContent;
        return { key: el.id || `${el.tagName}:${el.textContent}`, name: (name ?? "").trim() };
      });
      if (!focused) continue;
      expect(focused.name).not.toBe("");
      reached.add(focused.key);
    }
    expect(reached.size).toBeGreaterThanOrEqual(controls);
    for (const id of ["gift-open", "spin", "grid-start", "promo-code", "promo-claim"]) expect(reached.has(id)).toBe(true);
    await page.close();
  });
});
