// What running several instances needs — the storage engine (docs/design.md §8a, docs/postgres.md), the instance's
// name, job schedules, the drain behind a load balancer — spread into the tree of src/config/vars.ts.
import { int, text, v } from "./var-spec";

export const INSTANCE_VARS = {
  /** Where the data lives: the SQLite file (dbPath), or PostgreSQL at `url` (DATABASE_URL). */
  database: {
    url: v("DATABASE_URL", {
      kind: text(/^postgres(ql)?:\/\/\S+$/, "a postgres:// (or postgresql://) connection URL"),
      secret: true,
      doc: "Run on PostgreSQL instead of the SQLite file (several instances on one database; docs/postgres.md).",
    }),
    poolMax: v("DATABASE_POOL_MAX", {
      kind: int(1, 1000),
      fallback: "10",
      doc: "PostgreSQL connections per instance (the connection budget is instances × this; docs/postgres.md).",
    }),
    batchSlots: v("DATABASE_BATCH_SLOTS", {
      kind: int(1, 999),
      fallback: "3",
      doc: 'PostgreSQL: grouped transactions (credits, debits, game actions, webhook failures) run in at most this many batches at once per instance, and never more than DATABASE_POOL_MAX − 1 (docs/postgres.md "Speed"). Fewer make bigger batches under load (less CPU a transaction); more let batches that run one body at a time go side by side.',
    }),
    /** Herald's own deadlines on PostgreSQL (docs/postgres.md "Deadlines"). */
    connectTimeoutMs: v("DATABASE_CONNECT_TIMEOUT_MS", {
      kind: int(1000, 60_000),
      fallback: "3000",
      doc: "Deadline for opening a PostgreSQL connection (TCP, TLS, authentication), rounded up to whole seconds.",
    }),
    acquireTimeoutMs: v("DATABASE_ACQUIRE_TIMEOUT_MS", {
      kind: int(100, 60_000),
      fallback: "2000",
      doc: "Deadline for a transaction to get a free pooled connection; past it the request answers 503 db_unavailable.",
    }),
    queryTimeoutMs: v("DATABASE_QUERY_TIMEOUT_MS", {
      kind: int(100, 3_600_000),
      fallback: "5000",
      doc: "Herald's deadline for one PostgreSQL statement outside a transaction (waiting for a connection included): past it the statement is cancelled on the server and the request answers 503 db_unavailable.",
    }),
    transactionTimeoutMs: v("DATABASE_TRANSACTION_TIMEOUT_MS", {
      kind: int(100, 3_600_000),
      fallback: "5000",
      doc: "Herald's deadline for one PostgreSQL transaction from its start to its commit: past it the statement in flight is cancelled, the connection discarded and the request answers 503 db_unavailable.",
    }),
    statementTimeoutMs: v("DATABASE_STATEMENT_TIMEOUT_MS", {
      kind: int(100, 3_600_000),
      fallback: "30000",
      doc: "PostgreSQL statement_timeout for every session: the server's own backstop, for a statement whose cancellation did not reach it.",
    }),
    idleInTransactionTimeoutMs: v("DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS", {
      kind: int(100, 3_600_000),
      fallback: "60000",
      doc: "PostgreSQL idle_in_transaction_session_timeout: a transaction left open this long is ended by the server.",
    }),
  },
  instanceId: v("HERALD_INSTANCE_ID", {
    kind: text(/^[\w.:-]{1,64}$/, "1-64 letters, digits, _ . : -"),
    doc: "This instance's name in job runs and job leases; default <hostname>-<pid>-<random>.",
  }),
  jobSchedules: v("JOB_SCHEDULES", {
    kind: text(
      /^([a-z0-9-]+=[0-9*/,?LW#A-Za-z -]+(;[a-z0-9-]+=[0-9*/,?LW#A-Za-z -]+)*)?$/,
      "name=pattern pairs separated by ; (e.g. auth-prune=0 */5 * * * *)",
    ),
    fallback: "",
    map: (pairs): Readonly<Record<string, string>> =>
      Object.fromEntries(
        pairs
          .split(";")
          .filter(Boolean)
          .map((pair) => [pair.slice(0, pair.indexOf("=")).trim(), pair.slice(pair.indexOf("=") + 1).trim()]),
      ),
    doc: "Another schedule for named jobs (Croner patterns, seconds first), e.g. `auth-prune=0 */5 * * * *`; a name Herald does not have is refused at start.",
  }),
  shutdownDrainDelayMs: v("SHUTDOWN_DRAIN_DELAY_MS", {
    kind: int(0, 600_000),
    // Production runs behind a load balancer (deploy/haproxy.cfg marks a server down within 3 s): keep serving until
    // it has stopped sending. Elsewhere a stop is immediate, as a developer at a terminal expects.
    fallback: (env) => (env.NODE_ENV === "production" ? "5000" : "0"),
    fallbackDoc: "`5000` with `NODE_ENV=production`, else `0`",
    doc: 'On SIGTERM, how long /readyz answers 503 while requests are still served, before the listening socket closes: at least the load balancer\'s time to mark the instance down (docs/operations.md, "Shutdown (SIGTERM)"). Default 5000 with NODE_ENV=production, else 0. SIGINT, or a second signal, skips it.',
  }),
};

/**
 * Variables Herald once read and no longer does, with what to do instead. A deployment that still sets one is told
 * so at start (a warning line from `herald serve`, a note from `herald config`) instead of being left to believe it
 * still has an effect.
 */
export const RETIRED_VARS: Readonly<Record<string, string>> = {
  HERALD_PG_PREVIEW: "PostgreSQL serves every operation now (DATABASE_URL alone selects it); HERALD_PG_PREVIEW has no effect: remove it",
};
