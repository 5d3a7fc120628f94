// What running several instances needs — the storage engine (DESIGN.md §8a, docs/postgres.md), the instance's
// name, job schedules — spread into CONFIG_VARS (src/config-vars.ts).
// (Kinds written out, not imported: src/config-vars.ts imports this file.)
const int = (min: number, max: number) => ({ type: "int" as const, min, max });

export const INSTANCE_VARS = {
  DATABASE_URL: {
    kind: { type: "string" as const, pattern: /^postgres(ql)?:\/\/\S+$/, allowed: "a postgres:// (or postgresql://) connection URL" },
    secret: true,
    doc: "Run on PostgreSQL instead of the SQLite file (several instances on one database; docs/postgres.md).",
  },
  DATABASE_POOL_MAX: {
    kind: int(1, 1000),
    fallback: "10",
    doc: "PostgreSQL connections per instance (the connection budget is instances × this; docs/postgres.md).",
  },
  DATABASE_STATEMENT_TIMEOUT_MS: {
    kind: int(100, 3_600_000),
    fallback: "30000",
    doc: "PostgreSQL statement_timeout for every session: a statement running longer is cancelled.",
  },
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: {
    kind: int(100, 3_600_000),
    fallback: "60000",
    doc: "PostgreSQL idle_in_transaction_session_timeout: a transaction left open this long is ended by the server.",
  },
  HERALD_INSTANCE_ID: {
    kind: { type: "string" as const, pattern: /^[\w.:-]{1,64}$/, allowed: "1-64 letters, digits, _ . : -" },
    doc: "This instance's name in job runs and job leases; default <hostname>-<pid>-<random>.",
  },
  JOB_SCHEDULES: {
    kind: {
      type: "string" as const,
      pattern: /^([a-z0-9-]+=[0-9*/,?LW#A-Za-z -]+(;[a-z0-9-]+=[0-9*/,?LW#A-Za-z -]+)*)?$/,
      allowed: "name=pattern pairs separated by ; (e.g. auth-prune=0 */5 * * * *)",
    },
    fallback: "",
    doc: "Another schedule for named jobs (Croner patterns, seconds first), e.g. `auth-prune=0 */5 * * * *`; a name Herald does not have is refused at start.",
  },
};

/**
 * Variables Herald once read and no longer does, with what to do instead. A deployment that still sets one is told
 * so at start (a warning line from `herald serve`, a note from `herald config`) instead of being left to believe it
 * still has an effect.
 */
export const RETIRED_VARS: Readonly<Record<string, string>> = {
  HERALD_PG_PREVIEW: "PostgreSQL serves every operation now (DATABASE_URL alone selects it); HERALD_PG_PREVIEW has no effect: remove it",
};
