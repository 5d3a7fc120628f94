/**
 * Time and randomness, the two inputs every verb takes from its context so tests and sandbox fixtures are
 * deterministic. A leaf module: it imports nothing, so the modules that need a Clock never import the context
 * that holds them (which would make an import cycle).
 */
export interface Clock {
  now(): Date;
}

/** Randomness goes through here so tests and sandbox fixtures can be made deterministic. */
export interface Rng {
  bytes(n: number): Uint8Array;
}

export const systemClock: Clock = { now: () => new Date() };
export const cryptoRng: Rng = { bytes: (n) => crypto.getRandomValues(new Uint8Array(n)) };

export const nowIso = (clock: Clock): string => clock.now().toISOString();

/** Milliseconds since 1970 by `clock`, without a Date for the system clock (for the hottest paths). */
export const epochMs = (clock: Clock): number => (clock === systemClock ? Date.now() : clock.now().getTime());
