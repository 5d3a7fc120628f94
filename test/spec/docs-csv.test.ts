// Docs audit: docs/http-conventions.md "CSV exports" — formula cells are neutralised, decimal text is not.
import { afterEach, describe, expect, test } from "bun:test";
import { jsonInit, openTestApp, type TestApp } from "../support/app";
import { createAdminToken } from "../support/partner";

let h: TestApp;
afterEach(async () => {
  await h?.close();
  h = undefined as unknown as TestApp;
});

describe("docs/http-conventions.md — CSV exports", () => {
  // docs/http-conventions.md:268-277
  test("a planted formula is exported with a leading quote", async () => {
    h = await openTestApp();
    const auth = { authorization: `Bearer ${await createAdminToken(h)}` };
    for (const title of ['=HYPERLINK("http://evil.example","x")', "+1+1", "-5", "@SUM(A1)"]) {
      await h.json("/admin/status/incidents", jsonInit("POST", { title, message: "m", severity: "warn" }, auth));
    }
    const csv = await (await h.request("/admin/ops/incidents/export", { headers: auth })).text();
    expect(csv).toContain(`"'=HYPERLINK(""http://evil.example"",""x"")"`);
    expect(csv).toContain(",'+1+1,");
    expect(csv).toContain(",'@SUM(A1),");
    expect(csv).toContain(",-5,");
    expect(csv).not.toMatch(/,=HYPERLINK/);
  });
});
