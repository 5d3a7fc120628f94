// Builds Herald's binary the way `npm run build` does, into a place of the test's choosing: the `bun build`
// command is read from package.json's build script, so a test of "the binary that ships" builds with the flags
// that ship, and a change of flags there is tested here without a second copy of them.
import pkg from "../../package.json";
import { BUN, REPO_ROOT } from "./process";

/** The `bun build …` arguments of package.json's build script (after `bun build`), with `--outfile` set to `outfile`. */
export function shippedBuildArgs(outfile: string): string[] {
  const script = String((pkg.scripts as Record<string, string>).build ?? "");
  const command = script
    .split("&&")
    .map((c) => c.trim())
    .find((c) => c.startsWith("bun build "));
  if (!command) throw new Error(`package.json's build script has no "bun build" command: ${script}`);
  const words = command.split(/\s+/).slice(2);
  const at = words.indexOf("--outfile");
  if (at === -1) throw new Error(`package.json's bun build has no --outfile: ${command}`);
  words.splice(at, 2, "--outfile", outfile);
  return words;
}

/** The flags of the shipped build that change the output (minify and bytecode), for names and reports. */
export function shippedCodeFlags(): string[] {
  return shippedBuildArgs("x").filter((w) => /^--(minify|bytecode|keep-names)/.test(w));
}

/**
 * Builds into `outfile`; `flags`, when given, replace the shipped minify/bytecode flags (a test of the checker
 * builds once with the flags that once broke the binary). Throws with bun's output when the build fails.
 */
export async function buildBinary(outfile: string, flags?: string[]): Promise<void> {
  let args = shippedBuildArgs(outfile);
  if (flags) args = [...flags, ...args.filter((w) => !/^--(minify|bytecode|keep-names)/.test(w))];
  const p = Bun.spawn([BUN, "build", ...args], { cwd: REPO_ROOT, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`bun build ${args.join(" ")} exited ${code}:\n${out}\n${err}`);
}
