import { type AppContext, slot, stateOf } from "../../context";
import { errorFields } from "../../log";
import { startWorker } from "../../worker-entry";
import { representation, type Representation } from "../caching/conditional";
import { AUDIENCES, type AudienceSlug, audienceSubset } from "./audiences";
import type { OpenApiDocument } from "./components";
import { referenceIndex } from "./reference-index";
import { transparencySubset } from "./subset";
import { referencePage } from "./ui";

// The served API documents (/api/openapi.json, /api/openapi.yaml, /api/openapi-transparency.yaml and one per audience,
// /api/openapi/<audience>.json, which the reference at /api/docs reads) as bytes with their validators, and where they
// are built. Building them takes the event loop for 0.1–8 s (more on a busy machine), during which no request at all
// is answered, /healthz included. So `herald serve` builds them in a worker (src/workers/openapi-worker.ts) from
// its start, and a request that comes first awaits that build with the loop free. Tests and tools that never start
// the worker build them on the loop when first asked for, as before: a worker per test app would cost more than the
// build.

/** The three served documents. */
export type DocumentName = "json" | "yaml" | "transparencyYaml";

// Revalidated on every use (a deploy changes them); the ETag makes that a 304 without a body.
const DOCUMENT_CACHE = "public, no-cache";

/** /api/openapi.json: the document as JSON text. */
const jsonDocument = (doc: OpenApiDocument): Representation => representation(JSON.stringify(doc), "application/json; charset=utf-8", DOCUMENT_CACHE);

/**
 * /api/openapi.yaml, by Bun's own YAML writer: ~80 ms over the whole document where the `yaml` package took 580 ms (and
 * the binary's first /api/openapi.yaml 1.6 s under the CI fuzz, past its 1 s bound); the text parses back to the same
 * document. It writes an object met twice as an anchor and aliases, which many YAML readers refuse past a count: so
 * it gets a copy without shared objects (parsed back from JSON, ~10 ms).
 */
const yamlDocument = (doc: OpenApiDocument): Representation =>
  representation(Bun.YAML.stringify(JSON.parse(JSON.stringify(doc)), null, 2), "application/yaml; charset=utf-8", DOCUMENT_CACHE);

/**
 * What one build makes, in the order the worker posts it: the JSON first (the preflight ETag needs only it); the
 * reference at /api/docs, its page with every operation listed in it (src/http/openapi/reference-index.ts) and
 * /api/openapi/<audience>.json, each audience's document (src/http/openapi/audiences.ts); then the YAML texts, the
 * transparency one of the public and transparency operations (src/http/openapi/subset.ts).
 */
export const PART_BUILDERS = {
  json: jsonDocument,
  audiences: (doc: OpenApiDocument) => ({
    page: referencePage(referenceIndex(doc)),
    audiences: Object.fromEntries(AUDIENCES.map((a) => [a.slug, jsonDocument(audienceSubset(doc, a.slug))])) as Record<AudienceSlug, Representation>,
  }),
  yaml: yamlDocument,
  transparencyYaml: (doc: OpenApiDocument) => yamlDocument(transparencySubset(doc)),
};

type Parts = { [K in keyof typeof PART_BUILDERS]: ReturnType<(typeof PART_BUILDERS)[K]> };

/** What the build worker posts: each part as soon as it is built (`buildMs` since the build began), or why it could not. */
export type BuildWorkerMessage =
  | { [K in keyof Parts]: { kind: "part"; name: K; part: Parts[K]; buildMs: number } }[keyof Parts]
  | { kind: "failed"; error: string };

/** A worker build that has not answered by then is given up, and the documents are built on the loop instead. */
export const WORKER_BUILD_DEADLINE_MS = 60_000;

/** The worker's answers, by part; null once it failed (the part is then built on the loop when asked for). */
type FromWorker = { [K in keyof Parts]: PromiseWithResolvers<Parts[K] | null> };

/** The documents of one app: from the worker once `startInWorker` was called, else built on the loop when first asked for. */
export class OpenApiDocuments {
  /** The document built on this thread, and the parts made of it so far. */
  private built: { doc: OpenApiDocument; parts: Partial<Parts> } | null = null;
  private fromWorker: FromWorker | null = null;
  constructor(
    private readonly build: () => OpenApiDocument,
    private readonly ctx: Pick<AppContext, "config" | "log">,
  ) {}

  /** The part named: awaits the worker's build when one runs (the loop stays free meanwhile). */
  async document<K extends keyof Parts>(name: K): Promise<Parts[K]> {
    return (await this.fromWorker?.[name].promise) ?? this.inThread(name);
  }

  /** One audience's document (/api/openapi/<slug>.json), from the worker's build when one runs. */
  async audience(slug: AudienceSlug): Promise<Representation> {
    return (await this.document("audiences")).audiences[slug];
  }

  /**
   * Starts building the documents in a worker over the same configuration (the worker builds the same app over an
   * in-memory database), once; nothing if they were built here already. A worker that fails, or does not answer
   * within `deadlineMs`, is ended with a warning, and the documents are built on the loop when first asked for.
   */
  startInWorker(deadlineMs = WORKER_BUILD_DEADLINE_MS): void {
    if (this.built || this.fromWorker) return;
    const started = performance.now();
    const answers = Object.fromEntries(Object.keys(PART_BUILDERS).map((k) => [k, Promise.withResolvers()])) as unknown as FromWorker;
    this.fromWorker = answers;
    let worker: Worker | null = null;
    let done = false;
    const end = () => {
      done = true;
      clearTimeout(timer);
      worker?.terminate();
      worker = null;
    };
    const fail = (err: unknown) => {
      if (done) return;
      end();
      this.ctx.log.warn("openapi documents: the worker build failed; they are built on the event loop when first asked for", errorFields(err));
      // A promise already answered keeps its answer: the JSON may have come before the YAML failed.
      for (const answer of Object.values(answers)) answer.resolve(null);
    };
    const timer = setTimeout(() => fail(new Error(`the build worker did not answer within ${deadlineMs} ms`)), deadlineMs);
    // The worker holds the process open until it has answered or is ended (a caller awaiting a document is answered
    // either way); the deadline's timer alone need not.
    timer.unref?.();
    try {
      worker = startWorker("workers/openapi-worker.ts");
      let awaited = Object.keys(answers).length;
      worker.onmessage = (event: MessageEvent<BuildWorkerMessage>) => {
        const m = event.data;
        if (m.kind === "failed") return fail(new Error(m.error));
        if (m.name === "json") {
          const wall_ms = Math.round(performance.now() - started);
          this.ctx.log.info("openapi documents built", { where: "worker", build_ms: m.buildMs, wall_ms, json_bytes: m.part.size });
        }
        (answers[m.name] as PromiseWithResolvers<unknown>).resolve(m.part);
        if (--awaited === 0) end();
      };
      worker.onerror = (event: ErrorEvent) => fail(event.error ?? new Error(event.message));
      // The Config is plain data (strings, numbers, booleans, arrays, nested objects): it survives structured cloning;
      // one that does not (a test's hand-made config) throws here and is built on the loop instead.
      worker.postMessage({ config: this.ctx.config });
    } catch (err) {
      fail(err);
    }
  }

  /**
   * A part built on this thread: the document once, with its JSON (all the ETag needs); each YAML text, and the
   * reference's page and documents, written when first asked for.
   */
  private inThread<K extends keyof Parts>(name: K): Parts[K] {
    if (!this.built) {
      const started = performance.now();
      const doc = this.build();
      const json = jsonDocument(doc);
      this.built = { doc, parts: { json } };
      this.ctx.log.info("openapi documents built", { where: "thread", build_ms: Math.round(performance.now() - started), json_bytes: json.size });
    }
    const { doc, parts } = this.built;
    return (parts[name] ??= PART_BUILDERS[name](doc) as Parts[K]);
  }
}

// The documents of the app built over a context, for whoever needs them outside its routes (serve, the preflight guards).
export const DOCUMENTS = slot("openapi documents", () => ({ docs: null as OpenApiDocuments | null }));

/** Starts the worker build of the documents of the app built over `ctx` (`herald serve`, at start). */
export function startOpenApiBuildInWorker(ctx: AppContext): void {
  stateOf(ctx, DOCUMENTS).docs?.startInWorker();
}

/**
 * The strong ETag of the served /api/openapi.json of the app built over `ctx`; null without one. Awaits the worker's
 * build when `herald serve` started one (so a job asking early waits, and never builds on the loop); elsewhere the
 * document is built on the loop if it was not yet.
 */
export async function openApiDocumentEtag(ctx: AppContext): Promise<string | null> {
  const docs = stateOf(ctx, DOCUMENTS).docs;
  return docs ? (await docs.document("json")).etag : null;
}
