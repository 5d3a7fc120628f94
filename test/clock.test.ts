import { describe, expect, test } from "bun:test";
import { parseCalendarStrict, zonedInstantMs } from "../src/clock";

// The one parser of times read from requests: Date.parse, without its roll-over of days and hours that do not exist.

describe("parseCalendarStrict", () => {
  test("real instants parse as Date.parse does", () => {
    for (const raw of ["2026-01-31T23:59:59Z", "2028-02-29T00:00:00Z", "2026-03-01", "2026-06-30T12:00:00.123+02:00", "2026-12-31T00:00Z"]) {
      expect(parseCalendarStrict(raw)).toBe(Date.parse(raw));
    }
  });

  test("days, months, hours, minutes and seconds that do not exist are NaN (Date.parse rolls them over)", () => {
    const rolled = ["2027-02-29T00:00:00Z", "2026-02-30T02:00:00Z", "2026-04-31", "2026-11-31T10:00:00Z", "2026-13-01T00:00:00Z", "2026-00-10", "2026-01-00"];
    const clock = ["2026-01-01T24:00:00Z", "2026-01-01T23:60:00Z", "2026-01-01T23:59:60Z"];
    for (const raw of [...rolled, ...clock]) {
      expect({ raw, ms: parseCalendarStrict(raw) }).toEqual({ raw, ms: Number.NaN });
    }
    // What the runtime alone makes of one of them: another day, silently.
    expect(new Date(Date.parse("2026-02-30T02:00:00Z")).toISOString()).toBe("2026-03-02T02:00:00.000Z");
  });

  test("text that is no time stays NaN", () => {
    for (const raw of ["", "tomorrow", "x2026-01-01", "2026-01-01T"]) expect(Number.isNaN(parseCalendarStrict(raw))).toBe(true);
  });
});

describe("zonedInstantMs", () => {
  test("takes an ISO 8601 instant with Z or an offset, and nothing without its zone", () => {
    expect(zonedInstantMs("2026-01-02T03:04:05Z")).toBe(Date.UTC(2026, 0, 2, 3, 4, 5));
    expect(zonedInstantMs("2026-01-02T03:04:05.5+01:00")).toBe(Date.UTC(2026, 0, 2, 2, 4, 5, 500));
    for (const raw of ["2026-01-02T03:04:05", "2026-01-02", "2026-02-30T00:00:00Z", "2026-01-02 03:04:05Z"]) {
      expect(Number.isNaN(zonedInstantMs(raw))).toBe(true);
    }
  });
});
