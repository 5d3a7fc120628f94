import { csvDoc } from "../formats/csv";
import { refusal } from "../routes/declare";

// The OpenAPI detail of an operator's CSV download. Apart from src/http/formats/csv.ts because it names the error envelope's
// schema (Elysia's typebox): the read worker writes CSV through csv.ts (the dead-letters export) and loads nothing of
// Elysia's.

/** csvDoc of an operator's CSV download, with the refusals every one of them shares (a bad query, no token). */
export const operatorCsvDoc = (
  summary: string,
  description = "text/csv (RFC 4180, header row), as an attachment",
  invalid = "invalid_query naming the parameter",
) => csvDoc(summary, description, { 400: refusal(invalid), 403: refusal("forbidden: no admin token") });
