import { Elysia, t } from "elysia";
import { cached, conditionalGet } from "../http/openapi/contract";
import type { AppContext } from "../context";
import { Envelope, ok } from "../http/envelope";
import { refusal } from "../http/routes/declare";
import { NotFoundError } from "../http/errors/errors";
import { ifNoneMatchHits } from "../http/caching/conditional";
import { SDK_DOWNLOAD_PREFIX, SDK_MANIFEST_PATH, sdkManifest, sdkTarball } from "./sdk";

const Manifest = Envelope(
  {
    name: t.String({ description: "npm package name" }),
    version: t.String({ description: "package version (semver)" }),
    api_version: t.String({ description: "the Herald API version it speaks (paths are unversioned; v1)" }),
    file: t.String({ description: "tarball file name" }),
    download_path: t.String({ description: "GET this path on this server for the tarball" }),
    download_url: t.String({ description: "download_path under PUBLIC_BASE_URL" }),
    sha256: t.String({ description: "hex sha256 of the tarball bytes served at download_path" }),
    integrity: t.String({ description: "sha512 subresource integrity of the same bytes, as npm's lockfile records it" }),
    size_bytes: t.Integer(),
    generated_at: t.String({ description: "when the tarball was built (ISO 8601 UTC)" }),
    module_format: t.Literal("esm"),
    type_declarations: t.Boolean(),
    dependencies: t.Integer({ description: "runtime dependencies of the package (none)" }),
    engines: t.Object({ node: t.String(), bun: t.String() }),
    install_command: t.String(),
    docs: t.String(),
  },
  "The published SDK: what it is and where to get it",
);

const fileParams = t.Object({ file: t.String({ maxLength: 128, description: "the manifest's `file`", examples: [sdkTarball.file] }) });
const CACHE = "public, max-age=300";

/** The SDK manifest (spec "Versioning": an SDK manifest) and the tarball it points to (docs/sdk.md). */
export function sdkRoutes(ctx: AppContext) {
  return new Elysia({ name: "herald:developers-sdk" })
    .get(
      SDK_MANIFEST_PATH,
      ({ set }) => {
        set.headers["cache-control"] = CACHE;
        return ok(sdkManifest(ctx.config.publicBaseUrl));
      },
      {
        query: t.Object({ include_meta: t.Optional(t.String()) }),
        response: { 200: Manifest },
        detail: {
          tags: ["transparency"],
          summary: "SDK manifest: name, version, API version, download path and sha256 of the @herald/client tarball",
          ...cached(CACHE),
        },
      },
    )
    .get(
      `${SDK_DOWNLOAD_PREFIX}:file`,
      ({ params, headers }) => {
        // Only the one embedded tarball exists; any other name (an older version too) is a plain 404.
        if (params.file !== sdkTarball.file) throw new NotFoundError("SDK tarball", params.file);
        const common = { etag: sdkTarball.etag, "cache-control": CACHE };
        // The one If-None-Match rule (weak comparison, `*`): src/http/caching/conditional.ts.
        if (ifNoneMatchHits(headers["if-none-match"], sdkTarball.etag)) return new Response(null, { status: 304, headers: common });
        return new Response(sdkTarball.bytes, {
          headers: { ...common, "content-type": "application/gzip", "content-disposition": `attachment; filename="${sdkTarball.file}"` },
        });
      },
      {
        params: fileParams,
        detail: {
          tags: ["transparency"],
          summary: "The @herald/client tarball (npm pack output) named by the SDK manifest",
          ...conditionalGet("etag"),
          responses: {
            200: { description: "application/gzip", content: { "application/gzip": { schema: { type: "string" as const, format: "binary" } } } },
            304: { description: "Not modified (If-None-Match matched the ETag, the tarball's sha256)" },
            404: refusal("Not found"),
          },
        },
      },
    );
}
