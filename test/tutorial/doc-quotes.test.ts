import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

/**
 * docs/writing-workflows.md quotes the tutorial's workflow and test: each `<!-- quote: file#region -->`
 * is followed by a code block that must equal that region of the file (between `// [region]` and
 * `// [/region]`, dedented), so the tutorial shows the code `npm test` runs.
 */
const root = new URL("../../", import.meta.url);
const read = (file: string) => readFileSync(new URL(file, root), "utf8");

function region(file: string, name: string): string {
  const match = new RegExp(`// \\[${name}\\]\\n([\\s\\S]*?)\\n[ ]*// \\[/${name}\\]`).exec(read(file));
  if (!match?.[1]) throw new Error(`${file} has no region ${name}`);
  const lines = match[1].split("\n");
  const indent = Math.min(...lines.filter((l) => l.trim()).map((l) => l.length - l.trimStart().length));
  return lines.map((l) => l.slice(indent)).join("\n");
}

describe("docs/writing-workflows.md", () => {
  const doc = read("docs/writing-workflows.md");
  const quotes = [...doc.matchAll(/<!-- quote: ([^#]+)#([\w-]+) -->\n\n```ts\n([\s\S]*?)\n```/g)];

  it("quotes the tutorial's workflow and its test", () => {
    expect(quotes.map((q) => q[2])).toEqual([
      "typed-values",
      "workflow",
      "child",
      "kit",
      "happy-path",
      "expiry",
    ]);
  });

  for (const [, file, name, quoted] of quotes) {
    it(`quotes ${file}#${name} as it is`, () => {
      expect(quoted).toBe(region(file as string, name as string));
    });
  }
});
