// Where a worker's entry file is, from source and inside the compiled binary.
//
// `bun build --compile` embeds every entrypoint it is given under /$bunfs/root/, by its path relative to the
// entrypoints' common folder (src/): a worker file must be listed in package.json's build script, and is then
// found as "./<path from src>". From source the same path is resolved against this file's folder, src/. (Checked on
// Bun 1.4.5: a URL built from import.meta.url points at the source tree, which a deployed binary does not have.)
// Every layer starts workers (db, http, ops), so this file imports nothing and sits beside clock.ts and log.ts; the
// entries that compose several rooms are in src/workers/.

const COMPILED = Bun.main.startsWith("/$bunfs/");

/** The specifier to hand `new Worker(…)` for a worker file given by its path under src/, e.g. "ops/backups/backup-worker.ts". */
export function workerEntry(pathFromSrc: string): string {
  if (COMPILED) return `./${pathFromSrc}`;
  return new URL(`./${pathFromSrc}`, import.meta.url).href;
}

/** Starts the worker at `pathFromSrc` (see workerEntry). */
export function startWorker(pathFromSrc: string, options?: WorkerOptions): Worker {
  return new Worker(workerEntry(pathFromSrc), options);
}
