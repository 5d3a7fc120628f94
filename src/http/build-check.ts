import { TransformDecodeError } from "@sinclair/typebox/value";

/**
 * Elysia's compiled handlers tell a failed decode of the query, path or body (a number out of its bounds, text
 * where a number belongs) from other errors by `error.constructor.name === "TransformDecodeError"`. A bundle that
 * renames classes (`bun build --minify`, i.e. `--minify-identifiers`; Bun 1.4.5's `--keep-names` does not keep
 * class names) makes that test false, and the handler then swallows the error and hands the raw text on: the
 * binary built so answered `hours=-1` with 200 and the string "-1", and `hours=1e308` with a 500. Such a build
 * must not serve: this is checked once when the app is built, so it refuses to start instead.
 */
export function assertValidationSurvivesBuild(): void {
  const name = TransformDecodeError.name;
  if (name !== "TransformDecodeError") {
    throw new Error(
      `this Herald build renamed classes (TransformDecodeError is called "${name}"), which turns off request validation; build it with \`npm run build\` (bun build without --minify-identifiers)`,
    );
  }
}
