import { Elysia, t } from "elysia";
import type { AppContext } from "../context";
import { AppError } from "../http/errors";
import { intQuery } from "../http/params";
import { actorLabel } from "./actors";
import { backTo, consolePage, csrfField, formAction, formDoc, NO_NOTICE, type Notice, pageDoc, refusal, refusingPage, wantsHtml, when } from "./console-kit";
import type { Guards } from "./guards";
import { MAX_ROTATION_OVERLAP_HOURS } from "./keys";
import { RotationForms } from "./keys-page-replay";
import { type KeyFilter, keysBody, NO_FILTER, PARTNERS_PATH, secretPage } from "./keys-page-view";
import type { OperatorRequest } from "./session-plugin";
import { ignoredMetaQuery } from "../http/envelope";

// GET /admin/console/partners: the partners and their API keys (never a secret), filtered by a GET form and a page
// at a time, with a form per key to disable it (a reason and a confirmation box) and to rotate its secret. A
// rotation answers with the new secret on its own page, once: 200, private, no-store, never in a URL or the log.
// Same verbs and audit rows as POST /admin/partners/keys/{key_id}/disable|rotate, with the operator's actor.

const KEY_ID = /^hk_[A-Za-z0-9_-]{1,64}$/;
const PARTNER = /^[A-Za-z0-9][A-Za-z0-9 ._-]{0,63}$/;
const FORM_ID = "^[0-9a-f]{32}$";

const PageQuery = t.Object({
  ...ignoredMetaQuery,
  partner: t.Optional(t.String({ maxLength: 64, description: "one partner's keys (its exact name)" })),
  mode: t.Optional(t.String({ maxLength: 16, description: "sandbox or live keys only (empty: both)" })),
  status: t.Optional(t.String({ maxLength: 16, description: "active or disabled keys only (empty: both)" })),
  offset: intQuery({ minimum: 0, maximum: 100_000, defaultValue: 0, description: "keys to skip (pagination)" }),
  done: t.Optional(t.String({ maxLength: 16, description: "set by the disable form's redirect" })),
  key: t.Optional(t.String({ maxLength: 80, description: "set by the disable form's redirect: the key's id" })),
});
const DisableForm = t.Object(
  {
    ...csrfField,
    reason: t.String({ maxLength: 500, description: "why (kept with the key and in the audit row)" }),
    confirm: t.Optional(t.String({ maxLength: 3, description: "yes: the confirmation box" })),
  },
  { additionalProperties: false },
);
const RotateForm = t.Object(
  {
    ...csrfField,
    overlap_hours: t.String({ maxLength: 2, description: "0 to 24: how long the old secret keeps working" }),
    form_id: t.Optional(t.String({ pattern: FORM_ID, description: "the rendered form's random id: a second post of it does not rotate again" })),
  },
  { additionalProperties: false },
);
const KeyParams = t.Object({ key_id: t.String({ minLength: 1, maxLength: 80 }) });

/** The filter from the query; a value the form cannot produce is dropped and named on the page (400). */
function filterOf(q: { partner?: string; mode?: string; status?: string; offset?: number }): { filter: KeyFilter; error: string | null } {
  const problems: string[] = [];
  const partner = (q.partner ?? "").trim();
  const mode = q.mode ?? "";
  const status = q.status ?? "";
  if (partner && !PARTNER.test(partner)) problems.push("a partner name is 1–64 letters, digits, spaces, dots, dashes or underscores");
  if (mode !== "" && mode !== "sandbox" && mode !== "live") problems.push("mode is sandbox or live");
  if (status !== "" && status !== "active" && status !== "disabled") problems.push("state is active or disabled");
  const filter: KeyFilter = {
    partner: partner && PARTNER.test(partner) ? partner : "",
    mode: mode === "sandbox" || mode === "live" ? mode : "",
    status: status === "active" || status === "disabled" ? status : "",
    offset: q.offset ?? 0,
  };
  return { filter, error: problems.length ? `That filter was not applied: ${problems.join("; ")}.` : null };
}

export function keysPageRoutes(ctx: AppContext, guards: Guards) {
  const keys = guards.partner.keys;
  const forms = new RotationForms(ctx.clock);
  const formId = () => Buffer.from(ctx.rng.bytes(16)).toString("hex");
  const who = (operator: OperatorRequest) => operator.session?.handle ?? actorLabel(operator.actor);

  const render = async (operator: OperatorRequest, filter: KeyFilter, filterError: string | null, notice: Notice, status = 200) =>
    consolePage(
      operator,
      "Partners & keys",
      PARTNERS_PATH,
      await keysBody(ctx, keys, { filter, filterError, csrf: operator.csrfToken, notice, formId }),
      status,
    );
  const refuseWith = (operator: OperatorRequest) => (status: number, error: string) => render(operator, NO_FILTER, null, { done: null, error }, status);

  return new Elysia({ name: "herald:console-partners" })
    .use(guards.operator.plugin)
    .get(
      PARTNERS_PATH,
      ({ operator, query, request }) => {
        const { filter, error } = filterOf(query);
        // A browser gets the page with the filter's message; a script (no text/html in Accept) the JSON envelope.
        if (error !== null && !wantsHtml(request)) throw new AppError("invalid_query", error);
        const done =
          query.done === "disabled" && query.key && KEY_ID.test(query.key) ? `Key ${query.key} disabled: requests with it are refused from now on.` : null;
        return render(operator, filter, error, { ...NO_NOTICE, done }, error === null ? 200 : 400);
      },
      {
        operator: refusingPage(refuseWith),
        query: PageQuery,
        detail: pageDoc(
          "Partners and keys (HTML page): every partner key by partner with its mode, state, scopes and use; forms to disable or rotate one",
          PARTNERS_PATH,
        ),
      },
    )
    .post(
      `${PARTNERS_PATH}/keys/:key_id/disable`,
      ({ operator, params, body, request }) =>
        formAction(
          request,
          async () => {
            if (!KEY_ID.test(params.key_id)) throw refusal(404, "Nothing was changed: that is not a key id Herald knows.");
            if (body.confirm !== "yes") throw refusal(400, "Nothing was changed: tick the box to confirm that requests with this key stop at once.");
            if (body.reason.trim() === "") throw refusal(400, "Nothing was changed: say why the key is disabled (the reason is kept with the key).");
            await keys.disable(params.key_id, body.reason.trim(), operator.actor, operator.requestId);
            return backTo(PARTNERS_PATH, { done: "disabled", key: params.key_id });
          },
          refuseWith(operator),
        ),
      {
        operator: "form",
        params: KeyParams,
        body: DisableForm,
        detail: formDoc(
          "Disable a partner key from the partners page (audited as partner_key.disable, as POST /admin/partners/keys/{key_id}/disable)",
          "csrf_token, reason, confirm=yes",
          {
            400: "no reason, or the confirmation box not ticked",
            404: "no such key",
          },
        ),
      },
    )
    .post(
      `${PARTNERS_PATH}/keys/:key_id/rotate`,
      ({ operator, params, body, request }) =>
        formAction(
          request,
          async () => {
            if (!KEY_ID.test(params.key_id)) throw refusal(404, "Nothing was changed: that is not a key id Herald knows.");
            const overlap = Number(body.overlap_hours);
            if (!/^\d{1,2}$/.test(body.overlap_hours) || overlap > MAX_ROTATION_OVERLAP_HOURS)
              throw refusal(400, `Nothing was changed: the old secret may keep working 0 to ${MAX_ROTATION_OVERLAP_HOURS} hours.`);
            // Check and take the form in one synchronous step (before any await): two posts of one form cannot both rotate.
            const seen = body.form_id ? forms.check(who(operator), body.form_id) : { kind: "new" as const };
            if (seen.kind === "replay" && seen.answer.keyId === params.key_id)
              return consolePage(operator, "New secret", PARTNERS_PATH, secretPage(seen.answer, true));
            if (seen.kind !== "new")
              throw refusal(
                409,
                `Nothing was changed: this form was already used to rotate a key (${when(seen.kind === "replay" ? seen.answer.at : seen.at)}). Reload the page to rotate again.`,
              );
            if (body.form_id) forms.begin(who(operator), body.form_id);
            const rotated = await keys.rotate(params.key_id, overlap, operator.actor, operator.requestId).catch((err: unknown) => {
              if (body.form_id) forms.forget(who(operator), body.form_id);
              throw err;
            });
            const { secret, ...key } = rotated;
            const answer = {
              keyId: key.key_id,
              partner: key.partner,
              mode: key.mode,
              secret,
              until: when(key.previous_secret_valid_until),
              at: when(key.updated_at)!,
            };
            if (body.form_id) forms.remember(who(operator), body.form_id, answer);
            return consolePage(operator, "New secret", PARTNERS_PATH, secretPage(answer, false));
          },
          refuseWith(operator),
        ),
      {
        operator: "form",
        params: KeyParams,
        body: RotateForm,
        detail: {
          ...formDoc(
            "Rotate a partner key's secret from the partners page (audited as partner_key.rotate, as POST /admin/partners/keys/{key_id}/rotate)",
            "csrf_token, overlap_hours, form_id",
            {
              400: "overlap_hours out of 0–24",
              404: "no such key",
              409: "the key is disabled (make a new key instead), or this form was already used",
            },
          ),
          responses: {
            200: {
              description:
                "text/html: the new secret, shown this once (private, no-store); a repeated post of the same form_id within 5 minutes answers the same page without rotating again",
            },
            303: { description: "Not signed in, from a browser: to /admin/sign-in" },
            403: { description: "Missing or wrong CSRF token, a wrong bearer token, or not signed in and not a browser (JSON envelope for a script)" },
            400: { description: "text/html: the page with the error (overlap_hours out of 0–24); the JSON envelope for a script" },
            404: { description: "text/html: the page with the error (no such key); the JSON envelope for a script" },
            409: { description: "text/html: the page with the error (the key is disabled, or the form was already used); the JSON envelope for a script" },
          },
        },
      },
    );
}
