// A Bun macro: runs at bundle time (also under `bun run` and `bun test`), so the compiled binary carries the
// SDK tarball it serves and needs no dist/sdk/ beside it. When dist/sdk/ is missing or was built from other
// sources than the current src/client/, it runs the SDK build first (sdk/build.ts, ~3 s), so what the server
// serves is always the package of the code it was built from.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { buildSdk, currentBuild, DEFAULT_OUT_DIR } from "../../sdk/build";

export function sdkArtifact() {
  const build = currentBuild() ?? buildSdk();
  const { inputs_sha256: _inputs, ...described } = build;
  return { ...described, base64: readFileSync(join(DEFAULT_OUT_DIR, build.file)).toString("base64") };
}
