import { Marked, type Token, type Tokens } from "marked";
import { escapeHtml } from "../http/formats/html";

// The developer portal's Markdown: the repository's docs, lexed and rendered by marked (pinned in package.json).
// A document is lexed once into sections, one per `##` heading (the part before the first is its introduction),
// each heading given the id GitHub gives it, so that a link `partner-auth.md#8-idempotency` written for the
// repository finds the same place on the portal. Rendering writes only markup marked writes from Markdown: the raw
// HTML a document may hold is shown as text (an HTML comment is dropped), so a page carries no script, no style and
// no element a document could smuggle in, whatever its text; every attribute value is escaped.

/** Where a link of a document leads on the portal: a URL, or `null` for text without a link (`hint` after it). */
export type LinkTarget = { href: string } | { href: null; hint: string | null };

/** Resolves a document's link (its href as written) for the page being rendered. */
export type LinkResolver = (href: string) => LinkTarget;

export interface Section {
  /** The `##` heading's id; "" for the introduction (the text before the first `##`, with the `#` title). */
  readonly id: string;
  readonly tokens: Token[];
  /** The ids of every heading in the section, its own first. */
  readonly anchors: readonly string[];
}

export interface LexedDoc {
  /** The repository path, `docs/partner-auth.md`. */
  readonly path: string;
  readonly sections: readonly Section[];
}

type WithId = { id?: string };

/**
 * GitHub's heading anchor (github-slugger): lower case, every character but letters, marks, digits, connector
 * punctuation (`_`), spaces and `-` removed, spaces made `-`. "9. Error answers" → `9-error-answers`,
 * "`POST /api/partner/webhooks/{webhook_id}/recover`" → `post-apipartnerwebhookswebhook_idrecover`.
 */
export function slugOf(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, "")
    .replace(/ /g, "-");
}

/** The text of inline tokens as a reader sees it (code spans' code, links' words): what an anchor is made from. */
export function plainText(tokens: readonly Token[] | undefined): string {
  let out = "";
  for (const t of tokens ?? []) {
    if ("tokens" in t && Array.isArray(t.tokens) && t.tokens.length) out += plainText(t.tokens);
    else if ("text" in t && typeof t.text === "string") out += t.text;
  }
  return out;
}

// Lexing depends on no page; one instance serves every document (GitHub-flavoured: tables, autolinks, strikethrough).
const lexer = new Marked({ gfm: true, async: false });

/** Lexes a document into its sections, every heading carrying its GitHub id (a repeated one gets `-1`, `-2` …). */
export function lexDoc(path: string, markdown: string): LexedDoc {
  const seen = new Map<string, number>();
  const sections: Array<{ id: string; tokens: Token[]; anchors: string[] }> = [{ id: "", tokens: [], anchors: [] }];
  for (const token of lexer.lexer(markdown)) {
    if (token.type === "heading") {
      const base = slugOf(plainText((token as Tokens.Heading).tokens));
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      const id = n === 0 ? base : `${base}-${n}`;
      (token as WithId).id = id;
      if ((token as Tokens.Heading).depth === 2) sections.push({ id, tokens: [], anchors: [] });
      sections.at(-1)!.anchors.push(id);
    }
    sections.at(-1)!.tokens.push(token);
  }
  return { path, sections };
}

/** The sections of `doc` named by `ids` ("" is the introduction), in the document's order; throws on an unknown id. */
export function sectionsOf(doc: LexedDoc, ids: readonly string[] | undefined): Section[] {
  if (!ids) return [...doc.sections];
  const unknown = ids.filter((id) => !doc.sections.some((s) => s.id === id));
  if (unknown.length) throw new Error(`developer portal: ${doc.path} has no section ${unknown.map((id) => `"${id}"`).join(", ")}`);
  return doc.sections.filter((s) => ids.includes(s.id));
}

/**
 * Renders tokens to HTML for one page: headings with their ids (the `#` title left out: the page has its own), links
 * through `resolve`, raw HTML as text, tables without an empty header row (the worked example's key/value table).
 */
export function renderTokens(tokens: readonly Token[], resolve: LinkResolver): string {
  const md = new Marked({
    gfm: true,
    async: false,
    renderer: {
      heading(token) {
        if (token.depth === 1) return "";
        const id = (token as WithId).id;
        return `<h${token.depth}${id ? ` id="${escapeHtml(id)}"` : ""}>${this.parser.parseInline(token.tokens)}</h${token.depth}>\n`;
      },
      link(token) {
        const inner = this.parser.parseInline(token.tokens);
        const target = resolve(token.href);
        if (target.href !== null) return `<a href="${escapeHtml(target.href)}">${inner}</a>`;
        return target.hint && !inner.includes(target.hint.split("/").pop()!) ? `${inner} (<code>${escapeHtml(target.hint)}</code>)` : inner;
      },
      image(token) {
        // No document of the portal shows an image; one that did would point into the repository: its words instead.
        return escapeHtml(token.text);
      },
      html(token) {
        return /^\s*<!--[\s\S]*-->\s*$/.test(token.text) ? "" : escapeHtml(token.text);
      },
      table(token) {
        const cells = (row: Tokens.TableCell[], tag: "th" | "td") =>
          `<tr>${row.map((c) => `<${tag}${c.align ? ` class="align-${c.align}"` : ""}>${this.parser.parseInline(c.tokens)}</${tag}>`).join("")}</tr>`;
        // A header row with no words (`| | |`) names no column: the table is a list of pairs, shown without it.
        const head = token.header.some((c) => c.text.trim()) ? `<thead>${cells(token.header, "th")}</thead>` : "";
        return `<table>${head}<tbody>${token.rows.map((r) => cells(r, "td")).join("")}</tbody></table>\n`;
      },
    },
  });
  return md.parser([...tokens]);
}
