import pythonSigner from "../../docs/python/herald_sign.py" with { type: "text" };
import { repositoryText } from "./portal-files-macro" with { type: "macro" };

// The files the developer portal offers for download, each the repository's own file as this build has it (embedded
// at build time), so what a partner downloads is what the docs show and the tests run.

export interface PortalDownload {
  /** The name it is served and saved under: /developers/downloads/<file>. */
  readonly file: string;
  /** The repository file it is. */
  readonly source: string;
  readonly title: string;
  readonly description: string;
  readonly text: string;
}

export const DOWNLOADS_PREFIX = "/developers/downloads/";

export const PORTAL_DOWNLOADS: readonly PortalDownload[] = [
  {
    file: "herald_sign.py",
    source: "docs/python/herald_sign.py",
    title: "Python signer",
    description: "sign() and herald(): signs and sends a request; raises HeraldError with Herald's error code, message and request id",
    text: pythonSigner,
  },
  {
    file: "herald-sign.ts",
    source: "src/client/sign.ts",
    title: "TypeScript signer",
    description: "signRequest(), the canonical string and webhook signature checks; node:crypto only (the SDK's own signer)",
    text: repositoryText("src/client/sign.ts"),
  },
  {
    file: "webhook-receiver.ts",
    source: "docs/examples/webhook-receiver.ts",
    title: "Webhook receiver",
    description: "A complete receiver that verifies each delivery's signature and drops repeats (Bun, node:crypto only)",
    text: repositoryText("docs/examples/webhook-receiver.ts"),
  },
];

export const downloadPath = (d: PortalDownload) => DOWNLOADS_PREFIX + d.file;

/** The download a repository path is, if any (a doc's link to `python/herald_sign.py` leads to it). */
export const downloadOf = (source: string): PortalDownload | undefined => PORTAL_DOWNLOADS.find((d) => d.source === source);
