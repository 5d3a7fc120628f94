import type { Rng } from "../context";

// A client-supplied id is echoed only when it is short and plain, so it cannot inject into logs or headers.
const SANE_ID = /^[A-Za-z0-9._:-]{8,128}$/;

export function requestIdFor(header: string | null, rng: Rng): string {
  if (header && SANE_ID.test(header)) return header;
  return "req_" + Buffer.from(rng.bytes(12)).toString("hex");
}
