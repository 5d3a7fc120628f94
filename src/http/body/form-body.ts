import { AppError } from "../errors/errors";

/**
 * The one exception to the JSON body policy (docs/http-conventions.md): the operator sign-in and sign-out forms,
 * which a browser posts as `application/x-www-form-urlencoded` because an HTML form cannot send JSON. A route
 * opts in by declaring this content type in its OpenAPI `requestBody` (`formRequestBody`); every other route
 * keeps refusing form bodies with 415. The rules stay as strict as for JSON:
 * - the body is at most MAX_FORM_BYTES (a sign-in form holds a token and two short fields);
 * - `Content-Type: application/x-www-form-urlencoded`, no charset or UTF-8 — anything else is 415;
 * - valid UTF-8 after percent-decoding, no field twice, no `__proto__`;
 * - the resulting object of strings is checked against the route's schema by the HTTP core, which refuses
 *   unknown fields (additionalProperties: false).
 */
export const FORM_CONTENT_TYPE = "application/x-www-form-urlencoded";
export const MAX_FORM_BYTES = 8 * 1024;
const MAX_FIELDS = 16;

const invalid = (problem: string) => new AppError("invalid_payload", `Form body refused: ${problem}`, { details: [{ field: "body", problem }] });

/** The OpenAPI request body of a form route; its presence is what makes the HTTP core parse the form. */
export const formRequestBody = (description: string) => ({
  required: true,
  description,
  content: { [FORM_CONTENT_TYPE]: { schema: { type: "object" as const } } },
});

/** Whether an OpenAPI `detail` declares a form body (read by RouteIndex once the app is composed). */
export const declaresFormBody = (detail: unknown): boolean => {
  const content = (detail as { requestBody?: { content?: Record<string, unknown> } } | undefined)?.requestBody?.content;
  return !!content && FORM_CONTENT_TYPE in content;
};

function contentTypeProblem(header: string | null): AppError | null {
  const [typePart, ...params] = (header ?? "").split(";");
  const type = typePart!.trim().toLowerCase();
  if (type !== FORM_CONTENT_TYPE) {
    return new AppError("unsupported_media_type", `This form takes Content-Type ${FORM_CONTENT_TYPE}; got ${type.slice(0, 100) || "none"}`);
  }
  for (const p of params) {
    const [name, value] = p.split("=").map((s) => s.trim().toLowerCase().replace(/"/g, ""));
    if (name === "charset" && value !== "utf-8" && value !== "utf8") {
      return new AppError("unsupported_media_type", `charset ${String(value).slice(0, 40)} is not accepted; forms are UTF-8`);
    }
  }
  return null;
}

const decoder = new TextDecoder("utf-8", { fatal: true });

function decodeComponent(s: string): string | null {
  try {
    return decodeURIComponent(s.replace(/\+/g, " "));
  } catch {
    return null;
  }
}

/** The form's fields as an object of strings, or the refusal to answer. */
export function parseFormBytes(raw: Uint8Array, contentType: string | null): { value: Record<string, string> | undefined; error: AppError | null } {
  const typeError = contentTypeProblem(contentType);
  if (typeError) return { value: undefined, error: typeError };
  if (raw.byteLength > MAX_FORM_BYTES) {
    return {
      value: undefined,
      error: new AppError("payload_too_large", `A form body is at most ${MAX_FORM_BYTES} bytes`, { details: { max_bytes: MAX_FORM_BYTES } }),
    };
  }
  let text: string;
  try {
    text = decoder.decode(raw);
  } catch {
    return { value: undefined, error: invalid("the bytes are not valid UTF-8") };
  }
  const value: Record<string, string> = Object.create(null);
  const pairs = text === "" ? [] : text.split("&");
  if (pairs.length > MAX_FIELDS) return { value: undefined, error: invalid(`more than ${MAX_FIELDS} fields`) };
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    const name = decodeComponent(eq === -1 ? pair : pair.slice(0, eq));
    const field = decodeComponent(eq === -1 ? "" : pair.slice(eq + 1));
    if (name === null || field === null) return { value: undefined, error: invalid("a field is not valid percent-encoded UTF-8") };
    if (name === "__proto__") return { value: undefined, error: invalid("the field name __proto__ is not allowed") };
    if (name in value) return { value: undefined, error: invalid(`the field ${JSON.stringify(name.slice(0, 40))} appears twice`) };
    value[name] = field;
  }
  // A plain object again, so schema checks and handlers see an ordinary value.
  return { value: { ...value }, error: null };
}
