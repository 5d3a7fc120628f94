import { TASKS } from "./read-tasks";
import { type ApartAnswer, CHECKPOINT, CLOSE } from "../db/apart";
import { SqliteWorkerConnections, sqliteErrorCode } from "../db/sqlite-worker";

// The SQLite file's read worker (src/db/apart.ts): a read-only connection of its own (src/db/sqlite-worker.ts), one
// task at a time. Listed as an extra entrypoint in package.json's build so that the compiled binary carries it
// (src/worker-entry.ts).

declare const self: Worker;

const connections = new SqliteWorkerConnections();

self.onmessage = async (e: MessageEvent<{ id: number; path: string; task: string; args: unknown }>) => {
  const { id, path, task, args } = e.data;
  let answer: ApartAnswer;
  try {
    if (task === CHECKPOINT) {
      self.postMessage({ id, value: connections.checkpoint(path) } satisfies ApartAnswer);
      return;
    }
    if (task === CLOSE) {
      connections.closeAll();
      self.postMessage({ id, value: null } satisfies ApartAnswer);
      return;
    }
    const reader = connections.reader(path);
    const t = TASKS.get(task);
    if (!t) throw new Error(`no read task named ${task}`);
    answer = { id, value: await t.run(reader, args) };
  } catch (err) {
    answer = { id, error: { name: (err as Error).name ?? "Error", message: (err as Error).message ?? String(err), code: sqliteErrorCode(err) } };
  }
  self.postMessage(answer);
};
