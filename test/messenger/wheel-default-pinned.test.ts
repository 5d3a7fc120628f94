import { expect, test } from "bun:test";
import { WHEEL_CAMPAIGN } from "../../src/messenger/catalog";

// The built-in wheel's segments are part of every past spin's proof: a spin's outcome is recomputed from the
// server seed, the client seed and these weights (docs/messenger.md, provably fair). Editing them would make
// past spins of `wheel-default` verify to other segments. So they are written out here, not read from the
// constant: a change fails this test, and the way to change the wheel is a new campaign (another key).
test("the built-in wheel-default campaign is frozen: key, cooldown, and every segment's label, weight and reward", () => {
  expect(WHEEL_CAMPAIGN).toEqual({
    campaign_key: "wheel-default",
    title: "Daily wheel",
    cooldown_seconds: 86_400,
    segments: [
      { label: "10 points", weight: 40, reward: { free_spins: 0, missiles: 0, points: 10 } },
      { label: "25 points", weight: 25, reward: { free_spins: 0, missiles: 0, points: 25 } },
      { label: "100 points", weight: 5, reward: { free_spins: 0, missiles: 0, points: 100 } },
      { label: "2 missiles", weight: 15, reward: { free_spins: 0, missiles: 2, points: 0 } },
      { label: "Free spin", weight: 10, reward: { free_spins: 1, missiles: 0, points: 0 } },
      { label: "Try again", weight: 5, reward: { free_spins: 0, missiles: 0, points: 0 } },
    ],
  });
});
