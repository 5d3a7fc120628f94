// A Bun macro: runs at bundle time (also under `bun run` and `bun test`), so the compiled binary carries the
// SDK tarball it serves and needs no dist/sdk/ beside it. When dist/sdk/ is missing or was built from other
// sources than the current src/client/, it runs the SDK build first (sdk/build.ts, ~3 s), so what the server
// serves is always the package of the code it was built from.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { buildSdk, currentBuild, DEFAULT_OUT_DIR } from "../../sdk/build";

/** Set by `npm run sdk:generate` (sdk/generate.ts), which loads the app for its document only. */
export const SDK_GENERATING = "HERALD_SDK_GENERATING";

export function sdkArtifact() {
  let build: ReturnType<typeof buildSdk>;
  try {
    build = currentBuild() ?? buildSdk();
  } catch (err) {
    // A method added to OPERATIONS before its operation is in api-types.ts fails the SDK build, and with it every
    // load of the app, `npm run sdk:generate` included, which is what writes api-types.ts. sdk:generate only reads
    // the document: it goes on without the tarball (an empty download), says so, and the next load builds it.
    if (process.env[SDK_GENERATING] !== "1") throw err;
    console.warn(`The SDK does not build yet (${String(err).split("\n")[0]}); writing api-types.ts from the document without it.`);
    return {
      name: "@herald/client",
      version: "0.0.0",
      api_version: "",
      file: "herald-client-unbuilt.tgz",
      sha256: "",
      size_bytes: 0,
      generated_at: "",
      base64: "",
    };
  }
  const { inputs_sha256: _inputs, ...described } = build;
  return { ...described, base64: readFileSync(join(DEFAULT_OUT_DIR, build.file)).toString("base64") };
}
