import pythonSigner from "../../../docs/python/herald_sign.py" with { type: "text" };
import { shellQuote, signedCurl } from "../formats/curl";
import { EXAMPLE_BODIES, EXAMPLE_PARAMS, exampleKey, sampleBody } from "./examples";

// `x-codeSamples` on every operation, which the API reference (Scalar, /api/docs) shows beside the request and
// response examples: curl (for a signed route, what `herald sign` prints), TypeScript with the HeraldClient of
// src/client, and Python — for signed routes with the signer of docs/python/herald_sign.py, which the document's
// introduction shows once (PYTHON_SIGNER_MARKDOWN), verbatim: docs/api-reference.md shows the same file and
// test/http/openapi-samples.test.ts runs it against the docs/design.md §3 test vectors.

type Json = Record<string, any>;

// Fixed illustration values (docs/design.md §3's test vector) so the document is the same bytes on every build.
const ILLUSTRATION = {
  keyId: "hk_live_KEY_ID",
  secret: "hsk_test_secret_0123456789abcdef",
  timestamp: 1767225600,
  nonce: () => "9f86d081884c7d659a2feaa0c55ad015",
  idempotencyKey: () => "3f1c2b9e-8a4d-4f6b-9c1e-2d3a4b5c6d7e",
};

type Access = "partner" | "admin" | "public";
const accessOf = (op: Json): Access => {
  const schemes = new Set<string>((op.security ?? []).flatMap((s: Json) => Object.keys(s)));
  if (schemes.has("AdminBearer")) return "admin";
  if (schemes.has("PartnerSignature") || schemes.has("PartnerKey")) return "partner";
  return "public";
};

const FORM = "application/x-www-form-urlencoded";

/**
 * The fields of a form body (the sign-in form, the operator console's forms): the example body, from the same
 * machinery as a JSON body's (EXAMPLE_BODIES, else sampleBody of the form's schema), every value a string. A
 * `csrf_token` the form declares is shown, as a placeholder saying where it comes from, when the schema requires it
 * or when nothing else stands in for it (the sign-in form, which has no bearer token to send instead).
 */
function formFields(method: string, path: string, access: Access, schema: Json | undefined): Record<string, string> {
  const example = (EXAMPLE_BODIES[exampleKey(method, path)] ?? sampleBody(schema) ?? {}) as Json;
  const fields: Record<string, string> = {};
  for (const [k, v] of Object.entries(example)) fields[k] = typeof v === "string" ? v : JSON.stringify(v);
  const csrf = schema?.properties?.csrf_token as Json | undefined;
  if (csrf && !("csrf_token" in fields) && (schema?.required?.includes("csrf_token") || access === "public")) {
    const from = /\bGET (\/\S*)/.exec(String(csrf.description ?? ""))?.[1];
    fields.csrf_token = from ? `<csrf_token printed into the form by GET ${from}>` : "<csrf_token printed into the page's form>";
  }
  return fields;
}

/** The example request of an operation: URL (path parameters and required query filled in) and body (JSON or form). */
function exampleRequest(baseUrl: string, path: string, method: string, op: Json, access: Access) {
  const params: Json[] = op.parameters ?? [];
  // A named example, else an id of 1 for an integer (a placeholder would be refused before the route runs), else the
  // name as a placeholder.
  const isInteger = (name: string) => (params.find((p) => p.name === name)?.schema as Json | undefined)?.type === "integer";
  const value = (name: string) => EXAMPLE_PARAMS[name] ?? (isInteger(name) ? "1" : name.toUpperCase());
  const filled = path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(value(name)));
  const query: Record<string, string> = {};
  for (const p of params) if (p.in === "query" && p.required) query[p.name] = value(p.name);
  const search = new URLSearchParams(query).toString();
  const target = filled + (search ? `?${search}` : "");
  // A form route refuses a JSON body with 415: its sample sends the form's fields, urlencoded, as a browser does.
  const hasBody = !!op.requestBody?.content?.["application/json"];
  const body = hasBody ? (EXAMPLE_BODIES[exampleKey(method, path)] ?? sampleBody(op.requestBody?.content?.["application/json"]?.schema)) : undefined;
  const formSchema = op.requestBody?.content?.[FORM]?.schema as Json | undefined;
  const form = !hasBody && formSchema && access !== "partner" ? formFields(method, path, access, formSchema) : undefined;
  return { url: baseUrl.replace(/\/$/, "") + target, target, query, body, form, cookie: cookieOf(params) };
}

/**
 * The Cookie header of the cookies an operation declares (the sign-in form's CSRF cookie), each value a placeholder
 * saying where it comes from (the GET its description names), or null when it declares none.
 */
function cookieOf(params: Json[]): string | null {
  const cookies = params.filter((p) => p.in === "cookie");
  if (!cookies.length) return null;
  return cookies
    .map((p) => {
      const from = /\bset by GET (\/[^\s:;,]*)/.exec(String(p.description ?? ""))?.[1];
      return `${p.name}=<the ${p.name} cookie ${from ? `GET ${from} set` : "Herald set"}>`;
    })
    .join("; ");
}

function curlSample(
  access: Access,
  method: string,
  url: string,
  target: string,
  body: string | null,
  form?: Record<string, string>,
  cookie?: string | null,
): string {
  if (access === "partner") {
    // What `herald sign` prints for this request (one line), signed with the illustration values.
    const [first, ...rest] = signedCurl({ ...ILLUSTRATION, method, url, target, body }).words;
    return [
      "# `herald sign` prints a ready curl command, signed now (valid ±300 s); sh runs it.",
      `herald sign --key "$HERALD_KEY_ID" --secret "$HERALD_SECRET" \\`,
      `  ${method} ${shellQuote(url)}${body ? ` \\\n  ${shellQuote(body)}` : ""} | sh`,
      "",
      "# It prints one line (wrapped here), e.g. with the docs/design.md §3 test secret and time:",
      `# ${first}`,
      ...rest.map((word) => `#   ${word}`),
    ].join("\n");
  }
  const lines = [`curl -sS -X ${method} ${shellQuote(url)}`];
  if (access === "admin") lines.push(`  -H "Authorization: Bearer $HERALD_ADMIN_TOKEN"`);
  if (cookie) lines.push(`  -b ${shellQuote(cookie)}`);
  if (body) lines.push(`  -H 'Content-Type: application/json'`, `  --data-binary ${shellQuote(body)}`);
  if (form) {
    lines.push(`  -H 'Content-Type: ${FORM}'`);
    for (const [k, v] of Object.entries(form)) lines.push(`  --data-urlencode ${shellQuote(`${k}=${v}`)}`);
  }
  return lines.join(" \\\n");
}

/** A JSON value as a TypeScript literal on one line: `{ user_id: "42", amount: 12.5 }`. */
export function tsValue(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(tsValue).join(", ")}]`;
  if (v && typeof v === "object") {
    const entries = Object.entries(v as Json).map(([k, x]) => `${/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(k) ? k : JSON.stringify(k)}: ${tsValue(x)}`);
    return entries.length ? `{ ${entries.join(", ")} }` : "{}";
  }
  return JSON.stringify(v ?? null);
}

function typescriptSample(access: Access, method: string, baseUrl: string, req: ReturnType<typeof exampleRequest>, jsonResponse: boolean): string {
  if (access === "partner") {
    const route = req.target.split("?")[0]!;
    const call =
      method === "GET"
        ? `herald.get(${JSON.stringify(route)}${Object.keys(req.query).length ? `, ${tsValue(req.query)}` : ""})`
        : method === "DELETE"
          ? `herald.delete(${JSON.stringify(route)})`
          : `herald.${method.toLowerCase()}(${JSON.stringify(route)}, ${tsValue(req.body ?? {})})`;
    return [
      `import { HeraldApiError, HeraldClient } from "@herald/client";`,
      "",
      "// Signs every request (docs/design.md §3), adds a nonce and an Idempotency-Key to mutations, retries 429/503.",
      "const herald = new HeraldClient({",
      `  baseUrl: ${JSON.stringify(baseUrl)},`,
      "  keyId: process.env.HERALD_KEY_ID!,",
      "  secret: process.env.HERALD_SECRET!,",
      "});",
      "try {",
      `  const result = await ${call};`,
      "  console.log(result);",
      "} catch (err) {",
      "  // Herald refused: branch on err.code (the body's `error`), never on the message; quote err.requestId to the operators.",
      "  if (!(err instanceof HeraldApiError)) throw err;",
      "  console.error(err.status, err.code, err.message, err.requestId);",
      "  process.exitCode = 1;",
      "}",
    ].join("\n");
  }
  const init: string[] = [];
  if (method !== "GET") init.push(`method: ${JSON.stringify(method)}`);
  const headers: string[] = [];
  if (access === "admin") headers.push("Authorization: `Bearer ${process.env.HERALD_ADMIN_TOKEN}`");
  if (req.cookie) headers.push(`Cookie: ${JSON.stringify(req.cookie)}`);
  if (req.body !== undefined) headers.push(`"Content-Type": "application/json"`);
  if (req.form) headers.push(`"Content-Type": "${FORM}"`);
  if (headers.length) init.push(`headers: { ${headers.join(", ")} }`);
  if (req.body !== undefined) init.push(`body: JSON.stringify(${tsValue(req.body)})`);
  if (req.form) init.push(`body: new URLSearchParams(${tsValue(req.form)})`);
  return [
    `const res = await fetch(${JSON.stringify(req.url)}${init.length ? `, {\n  ${init.join(",\n  ")},\n}` : ""});`,
    jsonResponse ? "console.log(res.status, await res.json());" : "console.log(res.status, await res.text());",
  ].join("\n");
}

/** A JSON value written as a Python literal. */
export function pythonLiteral(v: unknown): string {
  if (v === null || v === undefined) return "None";
  if (v === true) return "True";
  if (v === false) return "False";
  if (typeof v === "number" || typeof v === "string") return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(pythonLiteral).join(", ")}]`;
  return `{${Object.entries(v as Json)
    .map(([k, x]) => `${JSON.stringify(k)}: ${pythonLiteral(x)}`)
    .join(", ")}}`;
}

function pythonSample(
  access: Access,
  method: string,
  url: string,
  body: unknown,
  jsonResponse: boolean,
  form?: Record<string, string>,
  cookie?: string | null,
): string {
  if (access === "partner") {
    const args = [JSON.stringify(method), JSON.stringify(url), ...(body !== undefined ? [pythonLiteral(body)] : [])].join(", ");
    return [
      "# herald_sign.py is the signer in the introduction of this reference (docs/python/herald_sign.py, also at",
      "# /developers/downloads/herald_sign.py); it reads HERALD_KEY_ID and HERALD_SECRET from the environment.",
      "from herald_sign import herald, HeraldError",
      "",
      "try:",
      `    print(herald(${args}))`,
      "except HeraldError as e:",
      '    # Herald refused: branch on e.code (the body\'s "error"), never on the message; quote e.request_id to the operators.',
      '    raise SystemExit(f"{e.status} {e.code}: {e.message} (request_id {e.request_id})")',
    ].join("\n");
  }
  const headers: string[] = [];
  if (access === "admin") headers.push(`"Authorization": "Bearer " + os.environ["HERALD_ADMIN_TOKEN"]`);
  if (cookie) headers.push(`"Cookie": ${JSON.stringify(cookie)}`);
  if (body !== undefined) headers.push(`"Content-Type": "application/json"`);
  if (form) headers.push(`"Content-Type": "${FORM}"`);
  const data = body !== undefined ? `json.dumps(${pythonLiteral(body)}).encode()` : form ? `urllib.parse.urlencode(${pythonLiteral(form)}).encode()` : "None";
  const plain = method === "GET" && headers.length === 0;
  return [
    plain
      ? "import json, urllib.error, urllib.request"
      : form
        ? "import json, os, urllib.error, urllib.parse, urllib.request"
        : "import json, os, urllib.error, urllib.request",
    "",
    ...(plain ? [] : [`req = urllib.request.Request(${JSON.stringify(url)}, data=${data}, method=${JSON.stringify(method)}, headers={${headers.join(", ")}})`]),
    "try:",
    `    with urllib.request.urlopen(${plain ? JSON.stringify(url) : "req"}) as res:`,
    jsonResponse ? "        print(json.load(res))" : "        print(res.read().decode())",
    "except urllib.error.HTTPError as e:",
    '    # Herald refused; its body is {"success": false, "error", "message", "request_id"}: branch on "error".',
    "    refusal = json.load(e)",
    `    raise SystemExit(f"{e.code} {refusal['error']}: {refusal['message']} (request_id {refusal['request_id']})")`,
  ].join("\n");
}

/** The signer as Markdown, for the document's introduction. */
export const PYTHON_SIGNER_MARKDOWN = `Python samples of signed routes import this signer (\`herald_sign.py\`, standard library only; it raises \`HeraldError\` with Herald's error code, message and request id when Herald refuses):\n\n\`\`\`python\n${pythonSigner.trimEnd()}\n\`\`\``;

/** The code samples of one operation. */
export function codeSamplesOf(baseUrl: string, path: string, method: string, op: Json) {
  const m = method.toUpperCase();
  const access = accessOf(op);
  const req = exampleRequest(baseUrl, path, m, op, access);
  const body = req.body === undefined ? null : JSON.stringify(req.body);
  const ok = Object.entries(op.responses ?? {}).find(([s]) => /^2/.test(s))?.[1] as Json | undefined;
  const jsonResponse = !ok?.content || "application/json" in ok.content;
  return [
    {
      lang: "shell",
      label: access === "partner" ? "curl (herald sign)" : "curl",
      source: curlSample(access, m, req.url, req.target, body, req.form, req.cookie),
    },
    {
      lang: "typescript",
      label: access === "partner" ? "TypeScript (HeraldClient)" : "TypeScript",
      source: typescriptSample(access, m, baseUrl, req, jsonResponse),
    },
    { lang: "python", label: "Python", source: pythonSample(access, m, req.url, req.body, jsonResponse, req.form, req.cookie) },
  ];
}
