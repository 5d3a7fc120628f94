import type { AppContext } from "../context";
import { downloadOf, downloadPath } from "./portal-downloads";
import { catalogSection, changelogMarkdown, pagesMarkdown, signersMarkdown } from "./portal-generated";
import { type LexedDoc, type LinkResolver, lexDoc, renderTokens, sectionsOf } from "./portal-markdown";
import { type GeneratedPart, pagePath, PORTAL_DOCS, PORTAL_PAGES, type PortalPage } from "./portal-pages";
import type { Registry } from "./registry";

// Composes a developer portal page from its parts (portal-pages.ts) and leads each link where a reader of the portal
// can follow it:
// - to another doc, or a heading of one: the portal page that shows it (`partner-auth.md#8-idempotency` →
//   /developers/idempotency#8-idempotency; a heading on the same page stays `#…`);
// - to a repository file the portal serves (python/herald_sign.py, examples/webhook-receiver.ts): its download;
// - to a path on Herald (`/developers/deprecations.json`) or another site: unchanged;
// - to anything else of the repository (docs/design.md, an operator's section, src/…), which a partner's browser
//   cannot open on this server: the link's words without a link, followed by the file's repository path when the
//   words do not already name it.

/** Where each doc's headings are shown: `docs/x.md#id` → page slug, and `docs/x.md` → the page of its beginning. */
interface AnchorIndex {
  readonly anchors: ReadonlyMap<string, string>;
  readonly docs: ReadonlyMap<string, string>;
}

/** The pseudo path of what the portal writes itself: its relative links resolve as a doc's would. */
const GENERATED = "docs/developers-portal.md";

let lexedDocs: Map<string, LexedDoc> | undefined;
let index: AnchorIndex | undefined;

/** Every doc the portal renders, lexed once per process (when the first page is asked for, not at start). */
function lexed(path: string): LexedDoc {
  lexedDocs ??= new Map(Object.entries(PORTAL_DOCS).map(([p, text]) => [p, lexDoc(p, text)]));
  const doc = lexedDocs.get(path);
  if (!doc) throw new Error(`developer portal: ${path} is not among PORTAL_DOCS`);
  return doc;
}

function anchorIndex(): AnchorIndex {
  if (index) return index;
  const anchors = new Map<string, string>();
  const docs = new Map<string, string>();
  const anyPage = new Map<string, string>();
  for (const page of PORTAL_PAGES) {
    for (const part of page.parts) {
      if (!("doc" in part)) continue;
      if (!anyPage.has(part.doc)) anyPage.set(part.doc, page.slug);
      for (const s of sectionsOf(lexed(part.doc), part.sections)) {
        if (s.id === "" && !docs.has(part.doc)) docs.set(part.doc, page.slug);
        for (const a of s.anchors) if (!anchors.has(`${part.doc}#${a}`)) anchors.set(`${part.doc}#${a}`, page.slug);
      }
    }
  }
  for (const [doc, slug] of anyPage) if (!docs.has(doc)) docs.set(doc, slug);
  index = { anchors, docs };
  return index;
}

/** The resolver of the links of `docPath`'s text shown on the page `slug`. */
export function linkResolver(slug: string, docPath: string): LinkResolver {
  return (href) => {
    // Another site (https:, mailto:) or a path on Herald itself: as written.
    if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith("/")) return { href };
    const url = new URL(href, `file:///repository/${docPath}`);
    const path = decodeURIComponent(url.pathname.slice("/repository/".length));
    const anchor = decodeURIComponent(url.hash.slice(1));
    const download = downloadOf(path);
    if (download) return { href: downloadPath(download) };
    const { anchors, docs } = anchorIndex();
    const target = anchor ? anchors.get(`${path}#${anchor}`) : docs.get(path);
    if (target === undefined) return { href: null, hint: path };
    if (target === slug) return { href: anchor ? `#${anchor}` : pagePath(slug) };
    return { href: pagePath(target) + (anchor ? `#${anchor}` : "") };
  };
}

export interface ComposedPage {
  readonly html: string;
  /** The repository files the page is rendered from ("(in part)" when only some of their sections). */
  readonly sources: readonly string[];
}

/** Sections of `docPath`'s text as HTML on the page `slug`, their links resolved for it. */
const renderSections = (sections: LexedDoc["sections"], slug: string, docPath: string) =>
  renderTokens(
    sections.flatMap((s) => s.tokens),
    linkResolver(slug, docPath),
  );

function generated(kind: GeneratedPart, page: PortalPage, ctx: AppContext, registry: Registry): string {
  if (kind === "catalog") return catalogSection().value;
  const text = kind === "pages" ? pagesMarkdown() : kind === "signers" ? signersMarkdown() : changelogMarkdown(ctx, registry);
  return renderSections(lexDoc(GENERATED, text).sections, page.slug, GENERATED);
}

/** The files a part the portal writes itself is made from. */
const GENERATED_FROM: Record<GeneratedPart, string | null> = {
  pages: null,
  signers: "docs/python/herald_sign.py",
  catalog: "the error catalog (src/http/errors/errors.ts)",
  changelog: "the deprecation registry (src/developers/deprecations.yaml)",
};

/** The body of a page (everything inside <main> after its title) and what it was made from. */
export function composePage(page: PortalPage, ctx: AppContext, registry: Registry): ComposedPage {
  const html: string[] = [];
  const sources: string[] = [];
  for (const part of page.parts) {
    if ("generated" in part) {
      html.push(generated(part.generated, page, ctx, registry));
      const from = GENERATED_FROM[part.generated];
      if (from) sources.push(from);
      continue;
    }
    html.push(renderSections(sectionsOf(lexed(part.doc), part.sections), page.slug, part.doc));
    sources.push(part.sections ? `${part.doc} (in part)` : part.doc);
  }
  return { html: html.join("\n"), sources };
}

export const portalPage = (slug: string): PortalPage | undefined => PORTAL_PAGES.find((p) => p.slug === slug);
