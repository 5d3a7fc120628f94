import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { LINE_BATCH_CHARS, LINE_BATCH_MS, LineBatches } from "../../src/log";

// stdout's log lines are written in batches (src/log.ts LineBatches): an info line waits at most LINE_BATCH_MS, a
// warn or error line goes at once with everything before it, and a process that exits writes what waits.

const ROOT = join(import.meta.dir, "..", "..");

describe("log lines written in batches", () => {
  test("info lines wait together, a warn line takes them with it, order kept", async () => {
    const writes: string[] = [];
    const b = new LineBatches((text) => writes.push(text));
    b.add("a", false);
    b.add("b", false);
    expect(writes).toEqual([]);
    b.add("w", true);
    expect(writes).toEqual(["a\nb\nw\n"]);
    b.add("c", false);
    await Bun.sleep(LINE_BATCH_MS + 30);
    expect(writes).toEqual(["a\nb\nw\n", "c\n"]);
    b.flush();
    expect(writes.length).toBe(2);
  });

  test("a batch is written once it reaches LINE_BATCH_CHARS, without waiting", () => {
    const writes: string[] = [];
    const b = new LineBatches((text) => writes.push(text));
    const line = "x".repeat(999);
    const fit = Math.floor(LINE_BATCH_CHARS / 1000);
    for (let i = 0; i < fit; i++) b.add(line, false);
    expect(writes).toEqual([]);
    b.add(line, false);
    expect(writes.length).toBe(1);
    expect(writes[0]!.split("\n").length - 1).toBe(fit + 1);
    b.flush();
  });

  test("a process that logs at info and exits at once still writes its lines, in order", () => {
    const script = [
      `import { createLogger } from ${JSON.stringify(join(ROOT, "src", "log.ts"))};`,
      `const log = createLogger("info");`,
      `for (let i = 0; i < 5; i++) log.info("request", { i });`,
      `log.warn("careful");`,
      `log.info("last");`,
      `process.exit(0);`,
    ].join("\n");
    const child = Bun.spawnSync([process.execPath, "-e", script], { cwd: ROOT, stdout: "pipe", stderr: "pipe", timeout: 20_000 });
    expect(child.exitCode).toBe(0);
    const lines = child.stdout
      .toString()
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { msg: string; i?: number });
    expect(lines.map((l) => `${l.msg}${l.i ?? ""}`)).toEqual(["request0", "request1", "request2", "request3", "request4", "careful", "last"]);
  });

  test("an error nothing caught still writes the lines waiting before Bun prints it", () => {
    const script = [
      `import { createLogger } from ${JSON.stringify(join(ROOT, "src", "log.ts"))};`,
      `const log = createLogger("info");`,
      `log.info("waiting");`,
      `setTimeout(() => { throw new Error("uncaught in a timer"); }, 1);`,
    ].join("\n");
    const child = Bun.spawnSync([process.execPath, "-e", script], { cwd: ROOT, stdout: "pipe", stderr: "pipe", timeout: 20_000 });
    expect(child.exitCode).toBe(1);
    expect(child.stderr.toString()).toContain("uncaught in a timer");
    expect(
      child.stdout
        .toString()
        .trim()
        .split("\n")
        .map((l) => (JSON.parse(l) as { msg: string }).msg),
    ).toEqual(["waiting"]);
  });
});
