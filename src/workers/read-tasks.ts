import type { ApartTask } from "../db/apart";
import { latencyTask } from "../http/latency";
import { hourCountsTask } from "../http/request-log/catchup";
import { requestCountsTask } from "../partner/usage-service";
import { statusCountsTask } from "../webhooks/deliveries-store";

// Every read that may run apart from the event loop (src/db/apart.ts), by name, for the read worker to find.
// A task passed to store.apart must be listed here: the worker refuses a name it does not know (an error, never a
// read in place), and the tests of each caller run it through the worker on SQLite.

const ALL: ReadonlyArray<ApartTask<never, unknown>> = [latencyTask, requestCountsTask, statusCountsTask, hourCountsTask];

export const TASKS: ReadonlyMap<string, ApartTask<unknown, unknown>> = new Map(ALL.map((t) => [t.name, t as ApartTask<unknown, unknown>]));
