import { Elysia, t } from "elysia";
import { answersPages, sendsHeaders } from "../http/openapi/contract";
import type { AppContext } from "../context";
import { wantsHtml } from "../auth/session-plugin";
import { AppError } from "../http/errors/errors";
import { compileHtml, htmlResponse, minuteText } from "../http/formats/html";
import { pageSecurityHeaders, withPageSecurity } from "../http/security-headers";
import { CLAIM_CODE_PATTERN } from "./service";
import { type ClaimPageRow, claimForPage } from "./store";

// GET /claim/{code}: the page a claim's recipient reaches from the claim email (claim_url). It shows what the
// code stands for and where it stands — campaign, amount, issued, claimed — and nothing about the recipient or
// the partner. The code is the only key (160 random bits), so every unknown or malformed code gets the same 404:
// a page for a browser (Accept: text/html), the JSON envelope's not_found for anything else, as the console does.
// Redeeming stays the partner's signed call (POST /api/partner/donation-claims/{code}/redeem): the page says so.

// The code is in the URL: no referrer carries it to another site, no crawler keeps it. The page has no forms, no
// images and no script (src/http/security-headers.ts).
const PAGE_HEADERS = { ...pageSecurityHeaders({ referrer: "no-referrer" }), "x-robots-tag": "noindex, nofollow" };
const PAGE_CACHE = "no-store";

const CSS = `
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2328; background: #f6f8fa; }
main { max-width: 560px; margin: 0 auto; padding: 16px; }
.card { background: #fff; border: 1px solid #d1d9e0; border-radius: 6px; padding: 16px 20px; }
h1 { font-size: 22px; margin: 0 0 8px; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 12px 0; }
dt { color: #59636e; } dd { margin: 0; overflow-wrap: anywhere; }
.muted { color: #59636e; font-size: 14px; }
`;

interface PageData {
  title: string;
  heading: string;
  lead: string;
  facts: Array<{ label: string; value: string; id: string }>;
  advice: string;
}

const page = compileHtml<PageData>(
  "donation claim page",
  `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow"><title><%= it.title %></title>
<style>${CSS}</style></head>
<body><main><div class="card">
<h1><%= it.heading %></h1>
<p id="lead"><%= it.lead %></p>
<% if (it.facts.length) { %><dl><% for (const f of it.facts) { %><dt><%= f.label %></dt><dd id="<%= f.id %>"><%= f.value %></dd><% } %></dl><% } %>
<p class="muted" id="advice"><%= it.advice %></p>
</div></main></body></html>
`,
);

const STATUS_TEXT: Record<ClaimPageRow["status"], string> = {
  issued: "Waiting to be claimed",
  redeemed: "Claimed",
  cancelled: "Cancelled",
};

export function claimPageData(row: ClaimPageRow | null, code: string): PageData {
  if (!row) {
    return {
      title: "Donation claim not found",
      heading: "No donation claim has this code",
      lead: "Check that the link is the whole link from your email; a code starts with dc_ and has 32 more letters and digits.",
      facts: [],
      advice: "If the link is complete, ask whoever sent it to you: the claim may have been issued by mistake and removed.",
    };
  }
  const facts = [
    { label: "Campaign", value: row.campaign_id, id: "campaign" },
    { label: "Amount", value: row.amount, id: "amount" },
    { label: "Status", value: row.mode === "sandbox" ? "Sandbox preview (cannot be claimed)" : STATUS_TEXT[row.status], id: "status" },
    { label: "Issued", value: minuteText(row.created_at), id: "issued" },
    ...(row.redeemed_at ? [{ label: "Claimed", value: minuteText(row.redeemed_at), id: "claimed" }] : []),
    { label: "Claim code", value: code, id: "code" },
  ];
  if (row.mode === "sandbox") {
    return {
      title: "Donation claim (sandbox preview)",
      heading: "Sandbox preview of a donation claim",
      lead: `This claim was made with a sandbox (test) key to preview the claim a recipient receives: ${row.amount} from campaign ${row.campaign_id}. Nothing was sent and nothing can be claimed.`,
      facts,
      advice: "Sandbox claims exist for integration tests; a live claim's page looks like this one, without this notice.",
    };
  }
  const lead =
    row.status === "issued"
      ? `A donation of ${row.amount} from campaign ${row.campaign_id} is waiting for you.`
      : row.status === "redeemed"
        ? `This donation of ${row.amount} from campaign ${row.campaign_id} has been claimed.`
        : `This donation claim for campaign ${row.campaign_id} was cancelled and can no longer be claimed.`;
  const advice =
    row.status === "issued"
      ? "The organiser who sent you this link completes the claim with this code. Keep the link private: the code is all it takes to ask for the claim."
      : row.status === "redeemed"
        ? "A claim is paid out once. If you did not claim it yourself, contact the organiser who sent you the link and quote the claim code."
        : "Contact the organiser who sent you the link if you think this is a mistake, and quote the claim code.";
  return { title: "Donation claim", heading: "Your donation claim", lead, facts, advice };
}

export function claimPageRoutes(ctx: AppContext) {
  const render = (data: PageData, status: number): Response => withPageSecurity(htmlResponse(page(data), PAGE_CACHE, status), PAGE_HEADERS);
  return new Elysia({ name: "herald:donation-claim-page" }).get(
    "/claim/:claim_code",
    async ({ params, request }) => {
      const code = params.claim_code.toLowerCase();
      const row = CLAIM_CODE_PATTERN.test(code) ? await claimForPage(ctx.store, code) : null;
      if (!row && !wantsHtml(request)) throw new AppError("not_found", "No donation claim has this code");
      return render(claimPageData(row, code), row ? 200 : 404);
    },
    {
      params: t.Object({ claim_code: t.String({ maxLength: 200, description: "The claim code from the claim email (dc_…)" }) }),
      detail: {
        tags: ["public"],
        summary: "A donation claim's page for its recipient (HTML): campaign, amount and status; the claim_url of a claim",
        ...answersPages(),
        ...sendsHeaders({ "X-Robots-Tag": "noindex, nofollow: a claim page is for its recipient, not for search engines" }, { refusals: true }),
        responses: {
          200: { description: "text/html", content: { "text/html": { schema: { type: "string" as const } } } },
          404: {
            description: "No claim has this code: a page for a browser (Accept: text/html), else the JSON error not_found",
            content: { "text/html": { schema: { type: "string" as const } }, "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
          },
        },
      },
    },
  );
}
