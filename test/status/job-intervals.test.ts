import { expect, test } from "bun:test";
import { intervalSeconds } from "../../src/status/checks/jobs";

// Local times, as croner reads a pattern without a timezone. 2026-11-26 is a Thursday.
const at = (day: number, hour: number) => new Date(2026, 10, day, hour);
const DAY = 86_400;

test("a pattern's interval is the gap between its next two runs, whichever was asked before", () => {
  const weekdays = "0 0 9 * * 1-5";
  expect(intervalSeconds(weekdays, at(27, 10))).toBe(DAY); // Friday 10:00: Monday 9:00, then Tuesday
  expect(intervalSeconds(weekdays, at(28, 10))).toBe(DAY); // Saturday: still Monday, then Tuesday
  expect(intervalSeconds(weekdays, at(26, 10))).toBe(3 * DAY); // earlier than the answer kept: Friday, then Monday
  expect(intervalSeconds(weekdays, at(26, 8))).toBe(DAY); // Thursday 8:00: Thursday 9:00, then Friday
  expect(intervalSeconds(weekdays, at(26, 9))).toBe(3 * DAY); // at the run itself: the next runs come after it
  expect(intervalSeconds("0 0 9 * * 1-5", at(30, 10))).toBe(DAY); // Monday 10:00: Tuesday, then Wednesday
  expect(intervalSeconds("*/5 * * * * *", at(26, 10))).toBe(5);
});

test("a pattern that never fires again has no interval", () => {
  expect(intervalSeconds("0 0 0 1 1 * 2020", at(26, 10))).toBeNull();
});
