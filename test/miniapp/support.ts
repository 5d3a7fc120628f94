import { expect } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { initDataFor, tmaPost } from "../messenger/support";
import { jsonInit, type TestApp } from "../support/app";
import type { OperatorBrowser } from "../support/browser";
import { createAdminToken } from "../support/partner";

// What the mini-app's browser tests share: a page opened as Telegram opens the mini-app — a stand-in for
// window.Telegram.WebApp (what Telegram's script provides inside the chat) carrying the player's init data, theme and
// safe-area insets, and recording every call the page makes to it — at a phone's width, light or dark, recording
// whatever the page's Content-Security-Policy refuses. axe-core is run in the page for the accessibility checks.

export interface PlayerPage {
  page: Page;
  /** The console errors of refused loads (CSP): a page that uses only what its policy allows records none. */
  refused: string[];
}

/** Telegram's own default themes (its web client's): a hint grey below 4.5:1 on white, as real clients send. */
export const TELEGRAM_THEMES = {
  light: {
    bg_color: "#ffffff",
    text_color: "#000000",
    hint_color: "#999999",
    link_color: "#2481cc",
    button_color: "#3390ec",
    button_text_color: "#ffffff",
    secondary_bg_color: "#f4f4f5",
    destructive_text_color: "#e53935",
  },
  dark: {
    bg_color: "#212121",
    text_color: "#ffffff",
    hint_color: "#aaaaaa",
    link_color: "#8774e1",
    button_color: "#8774e1",
    button_text_color: "#ffffff",
    secondary_bg_color: "#181818",
    destructive_text_color: "#ff595a",
  },
} as const;

export interface OpenOptions {
  width?: number;
  height?: number;
  /** The page's and Telegram's colour scheme (the system's prefers-color-scheme is emulated to match). */
  scheme?: "light" | "dark";
  /** Telegram's themeParams (default: none, the page's own palette). */
  theme?: Record<string, string>;
  /** Telegram's safe-area insets, px. */
  safeArea?: { top: number; bottom: number };
  contentSafeArea?: { top: number; bottom: number };
  reducedMotion?: boolean;
  /** Runs on the page before it loads (a wallet to register, a function to expose). */
  before?: (page: Page) => Promise<void>;
}

/**
 * A fresh page at `url` as a player opens it: `initData` in the Telegram.WebApp stand-in (null: a plain browser,
 * no Telegram), `width` px wide (default 390 × 844).
 */
export async function openAsPlayer(browser: OperatorBrowser, url: string, initData: string | null, opts: OpenOptions = {}): Promise<PlayerPage> {
  const page = await browser.context!.newPage();
  const refused: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error" && /Content Security Policy|Refused to/i.test(m.text())) refused.push(m.text());
  });
  const scheme = opts.scheme ?? "light";
  await page.emulateMedia({ colorScheme: scheme, reducedMotion: opts.reducedMotion ? "reduce" : "no-preference" });
  if (initData !== null) {
    await page.addInitScript(
      (cfg: { initData: string; scheme: string; theme: Record<string, string>; safeArea: unknown; contentSafeArea: unknown }) => {
        const calls: unknown[][] = [];
        const handlers: Record<string, () => void> = {};
        const main = { text: "", visible: false, active: true, progress: false };
        const rec =
          (name: string, effect?: (...args: unknown[]) => void) =>
          (...args: unknown[]) => {
            calls.push([name, ...args]);
            effect?.(...args);
          };
        const user = JSON.parse(new URLSearchParams(cfg.initData).get("user") ?? "{}");
        const g = globalThis as unknown as Record<string, unknown>;
        g.__telegram = { calls, main, press: (which: string) => handlers[which]?.() };
        g.Telegram = {
          WebApp: {
            initData: cfg.initData,
            initDataUnsafe: { user },
            version: "8.0",
            platform: "android",
            colorScheme: cfg.scheme,
            themeParams: cfg.theme,
            safeAreaInset: cfg.safeArea,
            contentSafeAreaInset: cfg.contentSafeArea,
            isVersionAtLeast: (v: string) => Number.parseFloat(v) <= 8,
            ready: rec("ready"),
            expand: rec("expand"),
            onEvent: rec("onEvent"),
            enableClosingConfirmation: rec("enableClosingConfirmation"),
            disableClosingConfirmation: rec("disableClosingConfirmation"),
            HapticFeedback: {
              impactOccurred: rec("HapticFeedback.impactOccurred"),
              notificationOccurred: rec("HapticFeedback.notificationOccurred"),
              selectionChanged: rec("HapticFeedback.selectionChanged"),
            },
            MainButton: {
              setText: rec("MainButton.setText", (t) => {
                main.text = String(t);
              }),
              show: rec("MainButton.show", () => {
                main.visible = true;
              }),
              hide: rec("MainButton.hide", () => {
                main.visible = false;
              }),
              enable: rec("MainButton.enable", () => {
                main.active = true;
              }),
              disable: rec("MainButton.disable", () => {
                main.active = false;
              }),
              showProgress: rec("MainButton.showProgress", () => {
                main.progress = true;
              }),
              hideProgress: rec("MainButton.hideProgress", () => {
                main.progress = false;
              }),
              onClick: rec("MainButton.onClick", (cb) => {
                handlers.main = cb as () => void;
              }),
            },
            BackButton: {
              show: rec("BackButton.show"),
              hide: rec("BackButton.hide"),
              onClick: rec("BackButton.onClick", (cb) => {
                handlers.back = cb as () => void;
              }),
            },
          },
        };
      },
      { initData, scheme, theme: opts.theme ?? {}, safeArea: opts.safeArea ?? null, contentSafeArea: opts.contentSafeArea ?? null },
    );
  }
  await opts.before?.(page);
  await page.setViewportSize({ width: opts.width ?? 390, height: opts.height ?? 844 });
  await page.goto(url, { waitUntil: "load" });
  return { page, refused };
}

/** The calls the page made to the Telegram.WebApp stand-in, by name, in order (arguments after the name). */
export const telegramCalls = (page: Page) =>
  page.evaluate(() => (globalThis as unknown as { __telegram: { calls: unknown[][] } }).__telegram.calls.map((c) => c.map(String).join(" ")));

/** Telegram's main button as the page left it. */
export const mainButtonState = (page: Page) =>
  page.evaluate(() => ({ ...(globalThis as unknown as { __telegram: { main: Record<string, unknown> } }).__telegram.main }));

/** Presses Telegram's main or back button (the handler the page gave it). */
export const pressTelegram = (page: Page, which: "main" | "back") =>
  page.evaluate((w) => (globalThis as unknown as { __telegram: { press: (x: string) => void } }).__telegram.press(w), which);

const AXE = readFileSync(join(import.meta.dir, "../../node_modules/axe-core/axe.min.js"), "utf8");

/**
 * axe-core's WCAG 2.1 A/AA rules and its best practices on the page as it stands, run through the DevTools protocol
 * (the page's Content-Security-Policy allows no injected script, and needs not to); every violation as
 * "rule: target (summary)". `what` names the screen in a failure.
 */
export async function expectNoAxeViolations(page: Page, what: string): Promise<void> {
  await page.evaluate(AXE);
  const found = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (ctx: unknown, opts: unknown) => Promise<{ violations: any[]; passes: any[] }> } }).axe;
    const r = await axe.run((globalThis as unknown as { document: unknown }).document, {
      resultTypes: ["violations"],
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] },
    });
    return {
      violations: r.violations.flatMap((v) =>
        v.nodes.map((n: any) => `${v.id}: ${n.target.join(" ")} (${n.failureSummary?.split("\n").slice(1).join(" ").trim()})`),
      ),
      rules: r.passes.length,
    };
  });
  expect({ what, violations: found.violations }).toEqual({ what, violations: [] });
}

/** Whether the element's box lies wholly inside the viewport (what the player sees without scrolling). */
export async function inViewport(page: Page, selector: string): Promise<boolean> {
  const box = await page.locator(selector).boundingBox();
  const size = page.viewportSize()!;
  return box !== null && box.y >= 0 && box.x >= 0 && box.y + box.height <= size.height && box.x + box.width <= size.width;
}

/**
 * A screenshot of what the player sees (the viewport), as a PNG: into MINIAPP_SCREENSHOT_DIR when set (docs/images
 * holds the ones docs/messenger.md shows: `MINIAPP_SCREENSHOT_DIR=docs/images bun test test/miniapp/screens.browser.test.ts`),
 * else a temp dir. Always checked to be a PNG.
 */
export async function shoot(page: Page, name: string): Promise<void> {
  const dir = process.env.MINIAPP_SCREENSHOT_DIR || mkdtempSync(join(tmpdir(), "herald-miniapp-shot-"));
  mkdirSync(dir, { recursive: true });
  const file = join(dir, name);
  await page.screenshot({ path: file, animations: "disabled", caret: "hide" });
  expect(readFileSync(file).subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  if (!process.env.MINIAPP_SCREENSHOT_DIR) rmSync(dir, { recursive: true, force: true });
}

/** The player's balances as the ledger says (the last row's running totals; 0 without a row), as the page shows them. */
export async function ledgerBalances(h: TestApp, player: number) {
  const row = await h.ctx.store.get<{ free_spin_after: number; missile_after: number; points_after: number }>(
    "SELECT free_spin_after, missile_after, points_after FROM messenger_ledger WHERE telegram_user_id = ? ORDER BY id DESC LIMIT 1",
    [player],
  );
  return { points: String(row?.points_after ?? 0), spins: String(row?.free_spin_after ?? 0), missiles: String(row?.missile_after ?? 0) };
}

/** The balances the page shows. */
export const pageBalances = async (page: Page) => ({
  points: await page.locator("#points").innerText(),
  spins: await page.locator("#spins").innerText(),
  missiles: await page.locator("#missiles").innerText(),
});

/** An operator's call (a promo, a mission) with a fresh admin token; its answer's body. */
export async function asOperator(h: TestApp, path: string, body: unknown): Promise<Record<string, any>> {
  const token = await createAdminToken(h);
  const r = await h.json(path, jsonInit("POST", body, { authorization: `Bearer ${token}` }));
  expect(r.status).toBe(200);
  return r.body;
}

/** The player's own call from elsewhere (another device or tab), straight to Herald. */
export const asPlayerElsewhere = (h: TestApp, player: number, path: string, body: unknown = {}) => h.json(path, tmaPost(initDataFor(h, { id: player }), body));

/**
 * The balances the page shows become the ledger's (within `ms`: a redraw may still be on its way), then must be.
 * The page's numbers are only ever the server's: a page that kept or guessed others fails here.
 */
export async function expectBalancesAsLedger(page: Page, h: TestApp, player: number, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  let shown = await pageBalances(page);
  let ledger = await ledgerBalances(h, player);
  while (JSON.stringify(shown) !== JSON.stringify(ledger) && Date.now() < deadline) {
    await page.waitForTimeout(50);
    shown = await pageBalances(page);
    ledger = await ledgerBalances(h, player);
  }
  expect(shown).toEqual(ledger);
}
