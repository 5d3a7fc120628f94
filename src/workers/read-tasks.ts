import { transactionCountTask } from "../chain/store/transactions";
import { eventCountsTask } from "../audio-share/store/track";
import type { ApartTask } from "../db/apart";
import { missionWindowTask } from "../messenger/store/mission-stats";
import { alertRunsPageTask } from "../ops/alerts/store";
import { routeSummariesTask } from "../http/request-log/latency";
import { hourCountsTask } from "../http/request-log/catchup";
import { reliabilityTask } from "../status/checks/reliability";
import { promotionEvidenceTask } from "../sandbox/store";
import { requestOutcomesTask } from "../status/store/read-models";
import { uptimePointsTask } from "../status/store/snapshots";
import { filteredCountsTask } from "../transparency/store/rows";
import { deadLettersCsvTask } from "../webhooks/dead-letters-export";
import { deadLetterNamesTask, deadLetterRowsTask, operatorDeadLettersTask, stateCountsTask } from "../webhooks/deliveries-store";

// Every read that may run apart from the event loop (src/db/apart.ts), by name, for the read worker to find.
// A task passed to store.apart must be listed here: the worker refuses a name it does not know, and
// test/db/apart.test.ts checks that every apartTask(…) in src/ is listed.

const ALL: ReadonlyArray<ApartTask<never, unknown>> = [
  routeSummariesTask,
  stateCountsTask,
  deadLetterRowsTask,
  operatorDeadLettersTask,
  deadLetterNamesTask,
  deadLettersCsvTask,
  requestOutcomesTask,
  reliabilityTask,
  hourCountsTask,
  filteredCountsTask,
  promotionEvidenceTask,
  transactionCountTask,
  alertRunsPageTask,
  missionWindowTask,
  uptimePointsTask,
  eventCountsTask,
];

export const TASKS: ReadonlyMap<string, ApartTask<unknown, unknown>> = new Map(ALL.map((t) => [t.name, t as ApartTask<unknown, unknown>]));
