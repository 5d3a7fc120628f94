// The provably-fair draws (docs/messenger.md, "Provably fair") recomputed in the player's browser with WebCrypto:
// the same results as the server's src/messenger/games/fair.ts, bit for bit (test/miniapp/fairness.browser.test.ts
// feeds 1,000 of the server's outcomes through this code in Chromium). Nothing here asks the server anything.

const encoder = new TextEncoder();
const hex = (bytes: ArrayBuffer) => Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");

/** hex(SHA-256(the server seed's 64 hex characters as ASCII)): the commitment shown before play. */
export async function seedHash(serverSeed: string): Promise<string> {
  return hex(await crypto.subtle.digest("SHA-256", encoder.encode(serverSeed)));
}

/** floor(x · n / 2^52), x the first 13 hex digits of HMAC-SHA256(key = server seed, "client_seed:nonce:cursor"). */
export async function fairInt(serverSeed: string, clientSeed: string, nonce: number, cursor: number, n: number): Promise<number> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(serverSeed), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const digest = hex(await crypto.subtle.sign("HMAC", key, encoder.encode(`${clientSeed}:${nonce}:${cursor}`)));
  return Number((BigInt(`0x${digest.slice(0, 13)}`) * BigInt(n)) >> 52n);
}

/** The wheel's segment: r = fairInt(total weight, nonce, cursor 0); the first index whose cumulative weight exceeds r. */
export async function pickWeighted(weights: readonly number[], serverSeed: string, clientSeed: string, nonce: number): Promise<number> {
  const total = weights.reduce((a, b) => a + b, 0);
  const r = await fairInt(serverSeed, clientSeed, nonce, 0, total);
  let acc = 0;
  for (let i = 0; i < weights.length; i++) {
    acc += weights[i]!;
    if (r < acc) return i;
  }
  return weights.length - 1;
}

/** Fisher–Yates over `cells`: for i from n − 1 down to 1, swap i with j = fairInt(i + 1, nonce, cursor i). */
export async function shuffleFair<T>(cells: readonly T[], serverSeed: string, clientSeed: string, nonce: number): Promise<T[]> {
  const out = [...cells];
  for (let i = out.length - 1; i >= 1; i--) {
    const j = await fairInt(serverSeed, clientSeed, nonce, i, i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** The recon grid's 25 cells: the 10 prizes, then 15 empty; position c of a layout holds cell layout[c]. */
const cell = (points: number, free_spins: number, missiles: number) => ({ points, free_spins, missiles });
export const GRID_CELLS = [
  cell(150, 0, 0),
  cell(50, 0, 0),
  cell(50, 0, 0),
  cell(20, 0, 0),
  cell(20, 0, 0),
  cell(20, 0, 0),
  cell(0, 1, 0),
  cell(0, 1, 0),
  cell(0, 0, 2),
  cell(0, 0, 2),
  ...Array.from({ length: 15 }, () => cell(0, 0, 0)),
] as const;

/** A grid's layout: the shuffle of [0, 1, …, 24]. */
export const gridLayout = (serverSeed: string, clientSeed: string, nonce: number) => shuffleFair([...GRID_CELLS.keys()], serverSeed, clientSeed, nonce);

export interface FairInput {
  game: "wheel" | "grid";
  serverSeed: string;
  /** The commitment the player was shown before play (server_seed_hash); empty: only the outcome is computed. */
  hash: string;
  clientSeed: string;
  nonce: string;
  /** The wheel's segment weights, comma-separated, in segment order. */
  weights: string;
}

export type FairProblem = "fair.bad_seed" | "fair.bad_hash" | "fair.bad_client" | "fair.bad_nonce" | "fair.bad_weights";

export type FairResult =
  | { ok: false; problems: FairProblem[] }
  | { ok: true; computedHash: string; hashMatches: boolean | null; segment: number | null; layout: number[] | null };

/** The most segments a wheel to check may have (the server's campaigns have at most 24). */
const MAX_WEIGHTS = 100;

/** Checks the input, then recomputes the commitment and the outcome; every problem named (a message key). */
export async function verify(input: FairInput): Promise<FairResult> {
  const problems: FairProblem[] = [];
  const seed = input.serverSeed.trim();
  if (!/^[0-9a-f]{64}$/.test(seed)) problems.push("fair.bad_seed");
  const hash = input.hash.trim().toLowerCase();
  if (hash !== "" && !/^[0-9a-f]{64}$/.test(hash)) problems.push("fair.bad_hash");
  const clientSeed = input.clientSeed;
  if (clientSeed === "" || clientSeed.length > 200) problems.push("fair.bad_client");
  const nonce = /^(0|[1-9][0-9]{0,15})$/.test(input.nonce.trim()) ? Number(input.nonce.trim()) : Number.NaN;
  if (!Number.isSafeInteger(nonce)) problems.push("fair.bad_nonce");
  let weights: number[] = [];
  if (input.game === "wheel") {
    const parts = input.weights.split(",").map((w) => w.trim());
    weights = parts.filter((w) => w !== "").map((w) => (/^[1-9][0-9]{0,6}$/.test(w) ? Number(w) : Number.NaN));
    if (weights.length < 2 || weights.length > MAX_WEIGHTS || weights.some((w) => !Number.isSafeInteger(w))) problems.push("fair.bad_weights");
  }
  if (problems.length) return { ok: false, problems };
  const computedHash = await seedHash(seed);
  return {
    ok: true,
    computedHash,
    hashMatches: hash === "" ? null : computedHash === hash,
    segment: input.game === "wheel" ? await pickWeighted(weights, seed, clientSeed, nonce) : null,
    layout: input.game === "grid" ? await gridLayout(seed, clientSeed, nonce) : null,
  };
}
