import { afterAll, beforeAll } from "bun:test";
import type { TestApp } from "../support/app";
import { chromiumPresent, OperatorBrowser } from "../support/browser";

/**
 * The frame of an ops browser test file: when Chromium is present, before all its tests `open` opens (and seeds)
 * the app, which is then served on 127.0.0.1 (and `served` plants what needs the server) to a launched browser;
 * after them all three are closed. `present` is for test.skipIf, `base()` the served origin.
 */
export function servedForBrowser(file: string, open: () => Promise<TestApp>, served?: (app: TestApp) => Promise<void>) {
  const present = chromiumPresent(file);
  const browser = new OperatorBrowser();
  let app: TestApp | undefined;
  let server: ReturnType<TestApp["app"]["listen"]> | undefined;
  beforeAll(async () => {
    if (!present) return;
    app = await open();
    server = app.app.listen({ hostname: "127.0.0.1", port: 0 });
    await served?.(app);
    await browser.launch();
  }, 120_000);
  afterAll(async () => {
    await browser.close();
    await server?.stop(true);
    await app?.close();
  });
  return { present, browser, base: () => `http://127.0.0.1:${server!.server!.port}` };
}
