// Claims of resolved issues that do not hold on today's main (re-verification of 2026-11-29, afternoon). Each test
// quotes the issue; they fail until the behaviour is restored.
import { afterEach, expect, test } from "bun:test";
import { jsonInit, openTestApp, type TestApp } from "../support/app";

let h: TestApp | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

// Issue 15, item 8: "Track auth header: in `optional` mode an invalid bearer gets 401 but `X-Audio-Share-Track-Auth:
// optional`; the header should say `required_invalid_bearer`-style truth for what happened". Resolved with
// "truthful X-Audio-Share-Track-Auth values"; since 865a8b6 the refused and the accepted request say `optional` again.
test("issue 15: in optional mode a 401 for an invalid bearer does not carry the header an accepted request carries", async () => {
  h = await openTestApp({ env: { AUDIO_SHARE_TRACK_AUTH: "optional" } });
  const track = (id: string, headers: Record<string, string>) =>
    h!.json("/api/public/audio-share-links/track", jsonInit("POST", { event_type: "copy", destination_url: "/tracks/1", client_event_id: id }, headers));
  const accepted = await track("c-1", {});
  const refused = await track("c-2", { authorization: "Bearer nope" });
  expect(accepted.status).toBe(200);
  expect(refused.status).toBe(401);
  expect(refused.body.error).toBe("track_auth_invalid");
  expect(refused.headers.get("x-audio-share-track-auth")).not.toBe(accepted.headers.get("x-audio-share-track-auth"));
});
