import { expect, test } from "bun:test";
import { join } from "node:path";
import { floatingPromises } from "./floating-promises";

// Every promise in src/ is awaited, returned, handled with .catch / .then(ok, failed), or dropped on purpose with
// `void` (test/conventions/floating-promises.ts says why this matters on the storage port).
// The limit is generous: the TypeScript program over src/ takes ~75 s on a quiet 2-core machine and ~200 s beside
// other work; a timeout here says nothing about the code.
test("no promise in src/ is dropped without a word", () => {
  expect(floatingPromises(join(import.meta.dir, "..", ".."))).toEqual([]);
}, 300_000);
