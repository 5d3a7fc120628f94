import type { ApartTask } from "../db/apart";
import { latencyTask } from "../http/latency";
import { requestCountsTask } from "../partner/usage-service";
import { statusCountsTask } from "../webhooks/deliveries-store";

// Every read that may run apart from the event loop (src/db/apart.ts), by name, for the read worker to find.
// A task passed to store.apart must be listed here (test/db/apart.test.ts checks that each one runs in the worker).

const ALL: ReadonlyArray<ApartTask<never, unknown>> = [latencyTask, requestCountsTask, statusCountsTask];

export const TASKS: ReadonlyMap<string, ApartTask<unknown, unknown>> = new Map(ALL.map((t) => [t.name, t as ApartTask<unknown, unknown>]));
