import { expect, test } from "bun:test";
import { cryptoRng } from "../../src/clock";
import { requestIdFor } from "../../src/http/request-id";
import { seededRng } from "../support/clock";

test("generated request ids are req_ + 24 hex digits and never repeat across many draws", () => {
  const ids = new Set<string>();
  for (let i = 0; i < 1000; i++) {
    const id = requestIdFor(null, cryptoRng);
    expect(id).toMatch(/^req_[0-9a-f]{24}$/);
    ids.add(id);
  }
  expect(ids.size).toBe(1000);
});

test("a sane client id is echoed; anything else gets a generated one", () => {
  const rng = seededRng();
  expect(requestIdFor("client-trace:0001", rng)).toBe("client-trace:0001");
  expect(requestIdFor("short", rng)).toMatch(/^req_[0-9a-f]{24}$/);
  expect(requestIdFor("bad id\r\nx-injected: 1", rng)).toMatch(/^req_[0-9a-f]{24}$/);
});

test("a seeded rng gives the same ids in the same order", () => {
  const a = seededRng();
  const b = seededRng();
  const draw = (rng: typeof a) => Array.from({ length: 70 }, () => requestIdFor(null, rng));
  expect(draw(a)).toEqual(draw(b));
});
