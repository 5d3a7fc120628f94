import type { Rng } from "../clock";

// A client-supplied id is echoed only when it is short and plain, so it cannot inject into logs or headers.
const SANE_ID = /^[A-Za-z0-9._:-]{8,128}$/;

// Ids are "req_" + 12 random bytes in hex. They are drawn 64 at a time (one rng call, one hex conversion) and
// sliced off one string: every request needs one, and a call per request was a measurable share of the
// redirect path.
const IDS_PER_DRAW = 64;
const ID_BYTES = 12;
const ID_LENGTH = 4 + ID_BYTES * 2;
const pools = new WeakMap<Rng, { ids: string; next: number }>();

function freshId(rng: Rng): string {
  let pool = pools.get(rng);
  if (!pool || pool.next >= IDS_PER_DRAW) {
    const hex = Buffer.from(rng.bytes(IDS_PER_DRAW * ID_BYTES)).toString("hex");
    let ids = "";
    for (let i = 0; i < IDS_PER_DRAW; i++) ids += "req_" + hex.slice(i * ID_BYTES * 2, (i + 1) * ID_BYTES * 2);
    pool = { ids, next: 0 };
    pools.set(rng, pool);
  }
  const at = pool.next++ * ID_LENGTH;
  return pool.ids.slice(at, at + ID_LENGTH);
}

export function requestIdFor(header: string | null, rng: Rng): string {
  if (header && SANE_ID.test(header)) return header;
  return freshId(rng);
}
