import type { Page } from "playwright-core";
import type { OperatorBrowser } from "../support/browser";

// What the mini-app's browser tests share: a page opened as Telegram opens the mini-app — window.Telegram.WebApp
// carrying the player's init data, as Telegram's script provides it inside the chat — at a phone's width, recording
// whatever the page's Content-Security-Policy refuses.

export interface PlayerPage {
  page: Page;
  /** The console errors of refused loads (CSP): a page that uses only what its policy allows records none. */
  refused: string[];
}

/**
 * A fresh page at `url` as a player opens it: `initData` in window.Telegram.WebApp (null: a plain browser, no
 * Telegram), `width` px wide. `before` runs on the page before it loads (a wallet to register, a function to expose).
 */
export async function openAsPlayer(
  browser: OperatorBrowser,
  url: string,
  initData: string | null,
  opts: { width?: number; before?: (page: Page) => Promise<void> } = {},
): Promise<PlayerPage> {
  const page = await browser.context!.newPage();
  const refused: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error" && /Content Security Policy|Refused to/i.test(m.text())) refused.push(m.text());
  });
  if (initData !== null) {
    await page.addInitScript((data: string) => {
      (globalThis as unknown as { Telegram: unknown }).Telegram = { WebApp: { initData: data, colorScheme: "light", ready() {}, expand() {} } };
    }, initData);
  }
  await opts.before?.(page);
  await page.setViewportSize({ width: opts.width ?? 390, height: 844 });
  await page.goto(url, { waitUntil: "load" });
  return { page, refused };
}
