// How large a request body may be, and how long it may take to arrive (src/http/body/body-deadline.ts): Config's
// `maxBodyBytes` and `requestBody`, spread into the tree of src/config/vars.ts.
import { int, v } from "./var-spec";

export const REQUEST_BODY_VARS = {
  maxBodyBytes: v("MAX_BODY_BYTES", {
    kind: int(1024, 64 * 1024 * 1024),
    fallback: String(1024 * 1024),
    doc: "Largest accepted request body; larger bodies get 413 payload_too_large.",
  }),
  /** How long a request body may take to arrive (src/http/body/body-deadline.ts): 408 request_timeout past it. */
  requestBody: {
    timeoutMs: v("REQUEST_BODY_TIMEOUT_MS", {
      // Below Bun's idle timeout (30 s, which closes a connection still waiting for its answer): past it the client
      // would get a closed connection instead of the 408.
      kind: int(100, 25_000),
      fallback: "10000",
      doc: "Longest a request body may take to arrive, counted from the end of its headers; a slower body gets 408 request_timeout and its connection is closed.",
    }),
    minBytesPerSec: v("REQUEST_BODY_MIN_BYTES_PER_SEC", {
      kind: int(0, 1_000_000_000),
      fallback: "1024",
      doc: "Least average rate of a request body once it has taken 2 s; a body trickled slower gets 408 request_timeout then (0 = only REQUEST_BODY_TIMEOUT_MS).",
    }),
  },
};
