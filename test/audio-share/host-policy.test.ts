import { afterEach, describe, expect, test } from "bun:test";
import { buildHostPolicy, checkDestination } from "../../src/audio-share/host-policy";
import type { TestApp } from "../support/app";
import { API, audioApp, build, q } from "./support";

const policy = buildHostPolicy(
  "http://localhost:3000",
  ["allowed.example", "*.cdn.example", "ports.example:8443", "203.0.113.7", "[2001:db8::1]", "münchen.example"],
  ["evil.test", "bad.allowed.example"],
);
const check = (url: string) => checkDestination(policy, url);

let h: TestApp | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("allowed destinations", () => {
  test.each([
    ["/tracks/42", "http://localhost:3000/tracks/42"],
    ["http://localhost:3000/tracks/42?t=30#player", "http://localhost:3000/tracks/42?t=30#player"],
    ["https://allowed.example/track/1", "https://allowed.example/track/1"],
    ["HTTPS://ALLOWED.EXAMPLE/Track", "https://allowed.example/Track"],
    ["https://media.cdn.example/a.mp3", "https://media.cdn.example/a.mp3"],
    ["https://ports.example:8443/x", "https://ports.example:8443/x"],
    ["https://203.0.113.7/x", "https://203.0.113.7/x"],
    ["https://[2001:db8::1]/x", "https://[2001:db8::1]/x"],
    ["https://münchen.example/lied", "https://xn--mnchen-3ya.example/lied"],
    ["https://xn--mnchen-3ya.example/lied", "https://xn--mnchen-3ya.example/lied"],
    ["https://allowed.example/login?next=/tracks/1", "https://allowed.example/login?next=/tracks/1"],
  ])("%s → %s", (input, href) => {
    const r = check(input);
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.url.href).toBe(href);
  });
});

// Every bypass attempt from issue 9, and then some: each is denied, naming the host it would really reach.
describe("bypass attempts are denied", () => {
  test.each([
    ["https://allowed.example@evil.test/", "evil.test", "userinfo"],
    ["https://user:pw@allowed.example/", "allowed.example", "userinfo"],
    ["https://evil.test#allowed.example", "evil.test", "denied_host"],
    ["https://evil.test/?allowed.example", "evil.test", "denied_host"],
    ["https://other.test#allowed.example", "other.test", "not_allowlisted"],
    ["HTTPS://ALLOWED.EXAMPLE.", "allowed.example.", "trailing_dot"],
    ["https://allowed.example./x", "allowed.example.", "trailing_dot"],
    ["HTTPS://EVIL.TEST.", "evil.test.", "trailing_dot"],
    ["https://xn--llowed-2nf.example/", "xn--llowed-2nf.example", "not_allowlisted"],
    ["https://аllowed.example/", "xn--llowed-2nf.example", "not_allowlisted"],
    ["https://münchen.evil.test/", "xn--mnchen-3ya.evil.test", "not_allowlisted"],
    ["https://allowed.example.evil.test/", "allowed.example.evil.test", "not_allowlisted"],
    ["https://evilallowed.example/", "evilallowed.example", "not_allowlisted"],
    ["https://cdn.example/x.mp3", "cdn.example", "not_allowlisted"],
    ["https://bad.allowed.example/", "bad.allowed.example", "denied_host"],
    ["https://sub.evil.test/", "sub.evil.test", "not_allowlisted"],
    ["//evil.test/x", "evil.test", "protocol_relative"],
    ["//allowed.example/x", "allowed.example", "protocol_relative"],
    ["/\\evil.test/x", "evil.test", "protocol_relative"],
    ["\\\\evil.test/x", "evil.test", "protocol_relative"],
    ["javascript:alert(document.domain)", "javascript:", "scheme_not_allowed"],
    ["JavaScript://allowed.example/%0Aalert(1)", "allowed.example", "scheme_not_allowed"],
    ["data:text/html,<script>alert(1)</script>", "data:", "scheme_not_allowed"],
    ["file:///etc/passwd", "file:", "scheme_not_allowed"],
    ["ftp://allowed.example/a.mp3", "allowed.example", "scheme_not_allowed"],
    ["https://allowed.example:8443/", "allowed.example:8443", "not_allowlisted"],
    ["http://localhost:3001/tracks/1", "localhost:3001", "not_allowlisted"],
    ["https://ports.example/x", "ports.example", "not_allowlisted"],
    ["https://evil.test:8443/", "evil.test", "denied_host"],
    ["http://127.0.0.1/", "127.0.0.1", "ip_literal"],
    ["http://2130706433/", "127.0.0.1", "ip_literal"],
    ["http://0x7f.1/", "127.0.0.1", "ip_literal"],
    ["http://[::1]/", "[::1]", "ip_literal"],
    ["http://[::ffff:127.0.0.1]/", "[::ffff:7f00:1]", "ip_literal"],
    ["https://[2001:db8::2]/", "[2001:db8::2]", "ip_literal"],
    ["https://allowed.example/login?next=https://evil.test/", "evil.test", "open_redirect_param"],
    ["https://allowed.example/login?redirect_uri=%2F%2Fevil.test", "evil.test", "open_redirect_param"],
    ["https://allowed.example/out?url=https%253A%252F%252Fevil.test%252F", "evil.test", "open_redirect_param"],
    ["https://allowed.example/#/login?next=//evil.test", "evil.test", "open_redirect_param"],
    ["https://allowed.example/go?to=javascript:alert(1)", "javascript:", "open_redirect_param"],
  ])("%s → %s (%s)", (input, host, reason) => {
    const r = check(input);
    expect(r.ok).toBe(false);
    if (!r.ok) expect({ code: r.error.code, host: r.error.host, reason: r.error.reason }).toEqual({ code: "destination_host_denied", host, reason });
  });

  test.each([
    ["java\nscript:alert(1)"],
    ["/tracks/\t1"],
    ["  "],
    ["tracks/42"],
    ["allowed.example/track"],
    ["https://" + "a".repeat(2100) + ".example/"],
    ["http://[::1/"],
  ])("%j is destination_invalid", (input) => {
    const r = check(input);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.code).toBe("destination_invalid");
  });
});

describe("warnings", () => {
  test("a redirect parameter to an allowed host and a URL in another parameter are warnings, not denials", () => {
    const r = check("https://allowed.example/login?next=https://allowed.example/t/1&ref=https://evil.test/");
    expect(r.ok).toBe(true);
    expect(r.warnings.map((w) => [w.code, w.param])).toEqual([
      ["redirect_param_present", "next"],
      ["embedded_url_param", "ref"],
    ]);
  });

  test("http on an https service is insecure_scheme", () => {
    const p = buildHostPolicy("https://herald.example", ["allowed.example"], []);
    const r = checkDestination(p, "http://allowed.example/x");
    expect(r.ok && r.warnings.map((w) => w.code)).toEqual(["insecure_scheme"]);
  });

  test("a malformed host list entry stops the start with a clear message", () => {
    expect(() => buildHostPolicy("http://localhost:3000", ["allowed.example/path"], [])).toThrow(/bare host/);
    expect(() => buildHostPolicy("http://localhost:3000", ["exa mple.com"], [])).toThrow(/not a host name/);
  });
});

describe("over HTTP", () => {
  test("a denied destination is 400 destination_host_denied naming the host, with request_id; nothing is written", async () => {
    h = await audioApp();
    const r = await build(h, { track_url: "https://allowed.example@evil.test/", use_short: 1 });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ success: false, error: "destination_host_denied", host: "evil.test", reason: "userinfo" });
    expect(r.body.request_id).toBe(r.headers.get("x-request-id")!);
    expect(r.body.details).toMatchObject({ field: "track_url", host: "evil.test" });
    expect(r.body.message).toContain("evil.test");
    expect(await h.ctx.store.get("SELECT count(*) AS n FROM audio_share_links")).toEqual({ n: 0 });
    // /track names it the same way: at the top level, beside request_id.
    const tracked = await h.json(`${API}/track`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ event_type: "click", destination_url: "https://evil.test/", client_event_id: "evt-000002" }),
    });
    expect(tracked.status).toBe(400);
    expect(tracked.body).toMatchObject({ success: false, error: "destination_host_denied", host: "evil.test", reason: expect.any(String) });
    expect(tracked.body.details).toMatchObject({ field: "destination_url", host: "evil.test" });
    expect(tracked.body.request_id).toBe(tracked.headers.get("x-request-id")!);
  });

  test.each(["javascript:alert(1)", "data:audio/mp3;base64,AAAA", "//evil.test/x", "https://evil.test#allowed.example", "http://[::1]:3000/"])(
    "%s is denied on every route that takes a destination",
    async (url) => {
      h = await audioApp();
      const built = await build(h, { track_url: url });
      expect([built.status, built.body.error]).toEqual([400, "destination_host_denied"]);
      const preview = await h.json(`${API}/preview?${q({ track_url: url })}`);
      expect([preview.status, preview.body.error]).toEqual([400, "destination_host_denied"]);
      const validated = await h.json(`${API}/validate?${q({ track_url: url })}`);
      expect(validated.status).toBe(200);
      expect(validated.body).toMatchObject({ valid: false, errors: [{ code: "destination_host_denied" }] });
      const tracked = await h.json(`${API}/track`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ event_type: "copy", destination_url: url, client_event_id: "evt-000001" }),
      });
      expect([tracked.status, tracked.body.error]).toEqual([400, "destination_host_denied"]);
    },
  );

  test("the deny list wins over the base host", async () => {
    h = await audioApp({ AUDIO_SHARE_DENIED_HOSTS: "localhost" });
    const r = await build(h, { track_url: "/tracks/1" });
    expect(r.body).toMatchObject({ error: "destination_host_denied", host: "localhost", reason: "denied_host" });
  });
});
