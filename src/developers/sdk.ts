import { createHash } from "node:crypto";
import { sdkArtifact } from "./sdk-artifact-macro" with { type: "macro" };

/**
 * The published SDK (`@herald/client`, built from src/client/ by sdk/build.ts) and its manifest. The tarball is
 * embedded at bundle time; its sha256 and integrity are computed here from the very bytes that are served, so
 * the manifest cannot describe another file than the download.
 */
const EMBEDDED = sdkArtifact();
const BYTES = Buffer.from(EMBEDDED.base64, "base64");

export const SDK_DOWNLOAD_PREFIX = "/developers/sdk/";
export const SDK_MANIFEST_PATH = "/developers/sdk-manifest.json";

const SHA256 = createHash("sha256").update(BYTES).digest("hex");

export const sdkTarball = {
  file: EMBEDDED.file,
  bytes: BYTES,
  sha256: SHA256,
  /** Subresource-integrity form, as npm records it in package-lock.json. */
  integrity: `sha512-${createHash("sha512").update(BYTES).digest("base64")}`,
  etag: `"${SHA256}"`,
};

export function sdkManifest(publicBaseUrl: string) {
  const downloadPath = SDK_DOWNLOAD_PREFIX + sdkTarball.file;
  const downloadUrl = publicBaseUrl.replace(/\/+$/, "") + downloadPath;
  return {
    name: EMBEDDED.name,
    version: EMBEDDED.version,
    api_version: EMBEDDED.api_version,
    file: sdkTarball.file,
    download_path: downloadPath,
    download_url: downloadUrl,
    sha256: sdkTarball.sha256,
    integrity: sdkTarball.integrity,
    size_bytes: sdkTarball.bytes.length,
    generated_at: EMBEDDED.generated_at,
    module_format: "esm" as const,
    type_declarations: true,
    dependencies: 0,
    engines: { node: ">=20", bun: ">=1.1" },
    install_command: `npm install ${downloadUrl}`,
    docs: "docs/sdk.md",
  };
}
