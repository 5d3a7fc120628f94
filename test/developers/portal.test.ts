import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Elysia } from "elysia";
import { buildGuards } from "../../src/auth/guards";
import { PORTAL_DOWNLOADS } from "../../src/developers/portal-downloads";
import { slugOf } from "../../src/developers/portal-markdown";
import { PORTAL_PAGES, pagePath } from "../../src/developers/portal-pages";
import { parseRegistry } from "../../src/developers/registry";
import { developerRoutes } from "../../src/developers/routes";
import { ERROR_CATALOG } from "../../src/http/errors/errors";
import { httpCore, RequestStates } from "../../src/http/core";
import { RouteIndex } from "../../src/http/routes/route-index";
import { HOME_LINKS } from "../../src/system/home";
import { openTestApp, type TestApp } from "../support/app";
import type { FakeClock } from "../support/clock";
import { BROWSER_ACCEPT } from "../support/console";
import { ContractCheck, type Doc } from "../support/contract-check";
import type { Exchange } from "../support/contract-log";
import { REPO_ROOT } from "../support/process";
import { docSections, type ParsedPage, parsePage, squash } from "./portal-support";

// The developer portal (docs/developers-portal.md) over real HTTP on 127.0.0.1: every page is HTML with the page
// security headers, an ETag and 304, and no script; each is checked with a real HTML parser (its ids, links,
// headings and code) against the docs it is rendered from, read with a real Markdown parser; every link on every page
// leads somewhere that answers, and every answer passes the contract check CI runs. Runs on either engine.

let h: TestApp;
let base = "";
let doc: Doc;
const pages = new Map<string, { html: string; parsed: ParsedPage; headers: Headers }>();

beforeAll(async () => {
  h = await openTestApp();
  h.app.listen({ hostname: "127.0.0.1", port: 0 });
  base = `http://127.0.0.1:${h.app.server!.port}`;
  doc = (await (await fetch(`${base}/api/openapi.json`)).json()) as Doc;
  for (const page of PORTAL_PAGES) {
    const res = await fetch(base + pagePath(page.slug), { headers: { accept: BROWSER_ACCEPT } });
    expect([page.slug, res.status]).toEqual([page.slug, 200]);
    const html = await res.text();
    pages.set(page.slug, { html, parsed: await parsePage(html), headers: res.headers });
  }
}, 60_000);
afterAll(async () => {
  await h.app.server?.stop(true);
  await h.close();
});

async function exchange(path: string, init: RequestInit = {}): Promise<Exchange> {
  const res = await fetch(base + path, init);
  const body = await res.text();
  const headers: Record<string, string> = {};
  res.headers.forEach((v, k) => {
    headers[k] = v;
  });
  return { method: "GET", path: path.split(/[?#]/)[0]!, status: res.status, headers, body, bytes: Buffer.byteLength(body), sent: [] };
}

describe("the pages", () => {
  test("each is HTML with the page headers, public no-cache and a strong ETag; If-None-Match gets a 304; all as documented", async () => {
    const check = new ContractCheck(doc);
    for (const page of PORTAL_PAGES) {
      const path = pagePath(page.slug);
      const ok = await exchange(path);
      expect([path, ok.status, ok.headers["content-type"]]).toEqual([path, 200, "text/html; charset=utf-8"]);
      expect(ok.headers["content-security-policy"]).toBe(
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
      );
      expect([ok.headers["x-frame-options"], ok.headers["referrer-policy"], ok.headers["x-content-type-options"]]).toEqual(["DENY", "same-origin", "nosniff"]);
      expect(ok.headers["cache-control"]).toBe("public, no-cache");
      // Strong; a compressed answer's is weakened by the HTTP core (the bytes on the wire differ), and still revalidates.
      expect(ok.headers.etag).toMatch(/^(W\/)?"[A-Za-z0-9_-]{43}"$/);
      expect(ok.body).toStartWith("<!doctype html>");
      const again = await exchange(path, { headers: { "if-none-match": ok.headers.etag! } });
      expect(again.headers.etag?.replace(/^W\//, "")).toBe(ok.headers.etag!.replace(/^W\//, ""));
      expect([path, again.status, again.bytes, again.headers["cache-control"]]).toEqual([path, 304, 0, "public, no-cache"]);
      expect([path, ...check.check(ok), ...check.check(again)]).toEqual([path]);
    }
    const missing = await exchange("/developers/no-such-page");
    expect([missing.status, JSON.parse(missing.body!).error]).toEqual([404, "not_found"]);
    expect(check.check(missing)).toEqual([]);
  });

  test("no page runs or loads anything: no script, no stylesheet, no image, no frame", () => {
    for (const [slug, { html, parsed }] of pages) {
      expect([slug, parsed.scripts]).toEqual([slug, 0]);
      expect([slug, /<(link|img|iframe|object|embed)\b|\son[a-z]+=|javascript:/i.test(html)]).toEqual([slug, false]);
    }
  });

  test("one h1, the page's title, and no heading skips a level; no id twice on a page", () => {
    for (const page of PORTAL_PAGES) {
      const { headings, ids } = pages.get(page.slug)!.parsed;
      expect(headings.filter((x) => x.level === 1).map((x) => x.text)).toEqual([page.title]);
      for (let i = 1; i < headings.length; i++)
        expect([page.slug, headings[i]!.text, headings[i]!.level <= headings[i - 1]!.level + 1]).toEqual([page.slug, headings[i]!.text, true]);
      expect([page.slug, ids.filter((id, i) => ids.indexOf(id) !== i)]).toEqual([page.slug, []]);
    }
  });

  test("each page shows its docs: every heading and code block of the sections it takes, as a Markdown parser reads them", () => {
    let compared = 0;
    for (const page of PORTAL_PAGES) {
      const { headings, code } = pages.get(page.slug)!.parsed;
      const shown = new Set(headings.map((x) => x.text));
      for (const part of page.parts) {
        if (!("doc" in part)) continue;
        const text = readFileSync(join(REPO_ROOT, part.doc), "utf8");
        for (const s of docSections(text)) {
          if (part.sections && !part.sections.includes(slugOf(s.title))) continue;
          for (const heading of s.headings) expect([page.slug, heading, shown.has(heading)]).toEqual([page.slug, heading, true]);
          for (const block of s.code)
            expect([page.slug, block.slice(0, 60), code.includes(block) || code.includes(`${block}\n`)]).toEqual([page.slug, block.slice(0, 60), true]);
          compared += s.headings.length + s.code.length;
        }
      }
    }
    expect(compared).toBeGreaterThan(150);
  });

  test("every link leads somewhere: an id on its page, another page's heading, a download, or a path that answers", async () => {
    const checked = new Set<string>();
    for (const [slug, { parsed }] of pages) {
      for (const href of parsed.links) {
        if (/^https:\/\//.test(href)) continue; // another site: not fetched (the machines that run Herald may be offline)
        expect([slug, href]).toEqual([slug, expect.stringMatching(/^[#/]/)]);
        const [path, anchor] = href.startsWith("#") ? [pagePath(slug), href.slice(1)] : (href.split("#") as [string, string | undefined]);
        const target = PORTAL_PAGES.find((p) => pagePath(p.slug) === path);
        if (target) {
          if (anchor) expect([slug, href, pages.get(target.slug)!.parsed.ids.includes(anchor)]).toEqual([slug, href, true]);
          continue;
        }
        if (checked.has(path!)) continue;
        checked.add(path!);
        const res = await fetch(base + path, { headers: { accept: BROWSER_ACCEPT } });
        await res.arrayBuffer();
        expect([slug, path, res.status]).toEqual([slug, path, 200]);
      }
    }
    expect(checked.size).toBeGreaterThan(10);
  });
});

describe("links between the docs", () => {
  const linksOf = (slug: string) => pages.get(slug)!.parsed.links;

  test("a doc's link to another doc or to one of its headings leads to the portal page that shows it", () => {
    // partner-auth.md's contents line: its sections now live on several pages.
    expect(linksOf("signing")).toEqual(
      expect.arrayContaining(["#1-keys-and-modes", "/developers/idempotency#8-idempotency", "/developers/errors#9-error-answers"]),
    );
    expect(linksOf("sandbox")).toEqual(
      expect.arrayContaining(["/developers/signing", "/developers/users", "/developers/salutes", "/developers/webhooks", "#promotion"]),
    );
    expect(linksOf("sdk")).toContain("/developers/webhooks#standard-webhooks-headers");
    expect(linksOf("")).toEqual(expect.arrayContaining(["/developers/signing#1-keys-and-modes", "/developers/limits#10-rate-limits"]));
  });

  test("a link to a repository file the portal serves is its download; one to another file keeps its words and names the file", () => {
    expect(linksOf("webhooks")).toContain("/developers/downloads/webhook-receiver.ts");
    expect(linksOf("")).toContain("/developers/downloads/herald_sign.py");
    // partner-auth.md's "[operators](#13-…)": that section is for operators, not on the portal.
    const signing = pages.get("signing")!.parsed;
    expect(signing.links.filter((l) => l.includes("13-operators"))).toEqual([]);
    expect(signing.text).toContain("rotation · operators (docs/partner-auth.md)");
    // design.md is not a portal page: its name stays, unlinked.
    expect(signing.links.filter((l) => l.includes("design"))).toEqual([]);
    expect(signing.text).toContain("These values are design.md §3's test vectors");
    // Raw HTML in a doc is never markup: webhooks.md's receiver markers (HTML comments) are dropped.
    expect(pages.get("webhooks")!.html).not.toContain("receiver:begin");
  });
});

describe("what the portal writes itself", () => {
  test("the signing page shows the Python signer as served, and lists every download", () => {
    const signing = pages.get("signing")!.parsed;
    expect(signing.code).toContain(readFileSync(join(REPO_ROOT, "docs/python/herald_sign.py"), "utf8"));
    for (const d of PORTAL_DOWNLOADS) expect(signing.links).toContain(`/developers/downloads/${d.file}`);
    expect(signing.links.some((l) => /^\/developers\/sdk\/herald-client-.*\.tgz$/.test(l))).toBe(true);
  });

  test("the errors page lists every code a partner route may answer, each at #code", () => {
    const errors = pages.get("errors")!.parsed;
    const partnerCodes = Object.entries(ERROR_CATALOG)
      .filter(([, e]) => e.endpoint_groups.some((g) => ["partner", "sandbox", "salutes"].includes(g)))
      .map(([code]) => code);
    expect(partnerCodes.length).toBeGreaterThan(20);
    for (const code of [...partnerCodes, "not_found", "idempotency_replay", "replay_detected", "rate_limited"]) expect(errors.ids).toContain(code);
    expect(errors.text).toContain("idempotency_key_reused HTTP 422 · fail_fast");
  });

  test("the index lists every page; the front door's Developer portal link opens it", async () => {
    const index = pages.get("")!.parsed;
    for (const page of PORTAL_PAGES.filter((p) => p.slug)) expect(index.links).toContain(pagePath(page.slug));
    expect(HOME_LINKS.developer_portal.href).toBe("/developers");
    const home = await (await fetch(`${base}/`, { headers: { accept: BROWSER_ACCEPT } })).text();
    expect(home).toContain('id="link-developer_portal" href="/developers"');
  });

  test("the changelog renders the deprecation registry: none scheduled in the shipped one, each entry of another", async () => {
    expect(pages.get("changelog")!.parsed.text).toContain("No breaking change and no deprecation has been announced");
    expect(pages.get("changelog")!.parsed.text).toContain("No endpoint sunsets are currently scheduled.");
    // The fixture registry through the same routes on the real HTTP core, at a time two of its entries are announced.
    const states = new RequestStates();
    const routes = new RouteIndex();
    const fixture = parseRegistry(readFileSync(join(import.meta.dir, "fixtures", "deprecations.yaml"), "utf8"));
    const clock = h.clock as FakeClock;
    const saved = clock.now().toISOString();
    clock.set("2026-04-24T12:00:00.000Z");
    try {
      const app = new Elysia({ normalize: false }).use(httpCore(h.ctx, states, routes)).use(developerRoutes(h.ctx, buildGuards(h.ctx, states), fixture));
      routes.load(app.routes);
      const res = await app.handle(new Request("http://localhost/developers/changelog"));
      const page = await parsePage(await res.text());
      expect(page.text).toContain("legacy-user-lookup, deprecated; sunset 2026-05-01");
      expect(page.text).not.toContain("future-change");
      // An entry's text is text: its "<angle brackets>" are shown, never taken for markup.
      expect(page.text).toContain("note the <angle brackets> & ampersands survive");
      expect(page.scripts).toBe(0);
      expect(page.headings.map((x) => x.text)).toEqual(expect.arrayContaining(["Changelog", "Versioning and deprecation policy", "Migration steps"]));
    } finally {
      clock.set(saved);
    }
  });
});

describe("downloads", () => {
  test("each helper is the repository's file, as an attachment with an ETag and 304; another name is 404; all as documented", async () => {
    const check = new ContractCheck(doc);
    for (const d of PORTAL_DOWNLOADS) {
      const path = `/developers/downloads/${d.file}`;
      const x = await exchange(path);
      expect([path, x.status, x.headers["content-type"], x.headers["content-disposition"]]).toEqual([
        path,
        200,
        "text/plain; charset=utf-8",
        `attachment; filename="${d.file}"`,
      ]);
      expect(x.body).toBe(readFileSync(join(REPO_ROOT, d.source), "utf8"));
      const again = await exchange(path, { headers: { "if-none-match": x.headers.etag! } });
      expect([again.status, again.bytes]).toEqual([304, 0]);
      expect([path, ...check.check(x), ...check.check(again)]).toEqual([path]);
    }
    const missing = await exchange("/developers/downloads/herald_sign.pyc");
    expect([missing.status, JSON.parse(missing.body!).error, check.check(missing)]).toEqual([404, "not_found", []]);
  });
});

describe("the OpenAPI document", () => {
  test("lists the portal's routes: public, their HTML or file, 304 and 404", () => {
    const ops = doc.paths as Record<string, Record<string, any>>;
    for (const path of ["/developers", "/developers/{slug}", "/developers/downloads/{file}"]) {
      const op = ops[path]!.get;
      expect([path, op.security, Object.keys(op.responses).filter((s) => ["200", "304"].includes(s))]).toEqual([path, [], ["200", "304"]]);
    }
    expect(Object.keys(ops["/developers"]!.get.responses["200"].content)).toEqual(["text/html"]);
    expect(Object.keys(ops["/developers/downloads/{file}"]!.get.responses["200"].headers)).toContain("Content-Disposition");
    expect(ops["/developers/{slug}"]!.get.responses["404"]).toBeDefined();
  });

  test("the GitHub anchors the docs link to are the ids the pages give", () => {
    expect(slugOf("9. Error answers")).toBe("9-error-answers");
    expect(slugOf("`POST /api/partner/webhooks/{webhook_id}/recover`")).toBe("post-apipartnerwebhookswebhook_idrecover");
    expect(slugOf("Statuses outside the spec's status guide")).toBe("statuses-outside-the-specs-status-guide");
    expect(squash(" a  b ")).toBe("a b");
  });
});
