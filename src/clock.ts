/**
 * Time and randomness, the two inputs every verb takes from its context so tests and sandbox fixtures are
 * deterministic. A leaf module: it imports nothing, so the modules that need a Clock never import the context
 * that holds them (which would make an import cycle).
 */
export interface Clock {
  now(): Date;
}

export interface Rng {
  bytes(n: number): Uint8Array;
}

export const systemClock: Clock = { now: () => new Date() };
export const cryptoRng: Rng = { bytes: (n) => crypto.getRandomValues(new Uint8Array(n)) };

/** Milliseconds since 1970 by `clock`, without a Date for the system clock (for the hottest paths). */
export const epochMs = (clock: Clock): number => (clock === systemClock ? Date.now() : clock.now().getTime());

/** `work`, or the error `expired` makes if `ms` pass first; the work itself goes on (its own deadlines end it). */
export async function within<T>(work: Promise<T>, ms: number, expired: () => Error): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([work, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(expired()), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

const CALENDAR_FIELDS = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2}))?)?/;

/**
 * `Date.parse`, except that a date or time of day that does not exist is NaN. The runtime's parser rolls such
 * values over (2027-02-30 → 2 March, T24:00 → the next day), so an operator's typo would quietly become another
 * instant; every time Herald reads from a request goes through here.
 */
export function parseCalendarStrict(raw: string): number {
  const ms = Date.parse(raw);
  const m = Number.isNaN(ms) ? null : CALENDAR_FIELDS.exec(raw);
  if (!m) return ms;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth) return Number.NaN;
  if (m[4] !== undefined && (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6] ?? 0) > 59)) return Number.NaN;
  return ms;
}

/** An ISO 8601 instant with its zone (`Z` or `±hh:mm`), to the nanosecond at most. */
export const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** Epoch ms of an ISO 8601 instant that names its zone and exists on the calendar; NaN for anything else. */
export const zonedInstantMs = (raw: string): number => (ISO_INSTANT.test(raw) ? parseCalendarStrict(raw) : Number.NaN);
