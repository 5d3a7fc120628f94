import { randomBytes } from "node:crypto";
import type { AnyElysia } from "elysia";
import { buildApp } from "../app";
import { SecretBox } from "../auth/secret-box";
import { openContext } from "../bootstrap";
import type { Config } from "../config";
import { createLogger } from "../log";
import { type BuildWorkerMessage, PART_BUILDERS } from "../http/openapi/documents";
import { buildOpenApi } from "../http/openapi/routes";

// The OpenAPI documents' build, off the serving thread (src/http/openapi/documents.ts starts it). It is handed the
// server's Config, builds the same app over it with buildApp, and describes it with buildOpenApi: the bytes are the
// ones the serving thread would have built (test/http/openapi-worker.test.ts compares them). The app's routes come
// from the Config alone, never from the database's rows or engine, so the app is built over an in-memory SQLite
// database and a throwaway master key: the worker writes nothing to disk (no database file, no development key
// file) and never connects to PostgreSQL.

declare const self: Worker;

/** The Config as posted (structured cloning drops the freeze), on an in-memory database, frozen again. */
function inMemory(posted: Config): Config {
  const freeze = <T>(value: T): T => {
    if (value && typeof value === "object") {
      for (const inner of Object.values(value)) freeze(inner);
      Object.freeze(value);
    }
    return value;
  };
  return freeze({ ...posted, dbPath: ":memory:", database: { ...posted.database, engine: "sqlite" as const, url: undefined } });
}

function post(message: BuildWorkerMessage, transfer: ArrayBuffer[] = []): void {
  self.postMessage(message, transfer);
}

/** A part's bytes, handed over rather than copied (each was made for this one document). */
function bytesOf(part: unknown): ArrayBuffer[] {
  if (part instanceof Uint8Array) return part.buffer instanceof ArrayBuffer ? [part.buffer] : [];
  return part && typeof part === "object" ? Object.values(part).flatMap(bytesOf) : [];
}

function buildAndPost(config: Config): void {
  const started = performance.now();
  const ctx = openContext(inMemory(config), { secrets: new SecretBox(randomBytes(32)), log: createLogger("silent") });
  const doc = buildOpenApi(buildApp(ctx) as unknown as AnyElysia, ctx);
  for (const name of Object.keys(PART_BUILDERS) as Array<keyof typeof PART_BUILDERS>) {
    const part = PART_BUILDERS[name](doc);
    post({ kind: "part", name, part, buildMs: Math.round(performance.now() - started) } as BuildWorkerMessage, bytesOf(part));
  }
}

if (!Bun.isMainThread) {
  self.onmessage = (event: MessageEvent<{ config: Config }>) => {
    try {
      buildAndPost(event.data.config);
    } catch (err) {
      post({ kind: "failed", error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
    }
  };
}
