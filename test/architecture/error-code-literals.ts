/**
 * Finds error codes written inline. An error-code literal is a string literal (quoted, or a
 * template without substitutions), outside comments, whose value equals a code that some code
 * module exports. A code module is a file that registers its codes with `ErrorCodeRegistry`
 * (src/errors/error-code-registry.ts); it is the only place a code's text may appear, so
 * everything else names the code by its constant.
 */

/** A string literal of a source text: its value (escapes left as written) and its line. */
export interface StringLiteral {
  value: string;
  line: number;
}

/** An error code written inline: where, and which code. */
export interface InlineCode {
  line: number;
  code: string;
}

const REGISTRY_AUGMENTATION = /declare\s+module\s+"[^"]*\/error-code-registry\.js"/;

/** True when `source` registers codes with ErrorCodeRegistry: a code module. */
export function isCodeModule(source: string): boolean {
  return REGISTRY_AUGMENTATION.test(source);
}

/** What an error code looks like: upper snake case, as every `*_ERRORS` value is. */
export const CODE_SHAPE = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$/;

/**
 * The codes a code module exports: its exported strings of the code shape, and the string values
 * of its exported objects (`ENGINE_ERRORS.INPUT_INVALID` is `"INPUT_INVALID"`).
 */
export function exportedCodes(moduleExports: Readonly<Record<string, unknown>>): string[] {
  const codes: string[] = [];
  for (const value of Object.values(moduleExports)) {
    if (typeof value === "string" && CODE_SHAPE.test(value)) codes.push(value);
    else if (
      value !== null &&
      typeof value === "object" &&
      Object.getPrototypeOf(value) === Object.prototype
    ) {
      for (const inner of Object.values(value)) {
        if (typeof inner === "string" && CODE_SHAPE.test(inner)) codes.push(inner);
      }
    }
  }
  return codes;
}

/** Characters after which a `/` starts a regular expression rather than a division. */
const BEFORE_REGEX = new Set([
  "",
  "(",
  ",",
  "=",
  ":",
  "[",
  "!",
  "&",
  "|",
  "?",
  "{",
  "}",
  ";",
  "+",
  "-",
  "*",
  "%",
  "<",
  ">",
  "~",
  "^",
]);

/** The string literals of TypeScript source; comments, regular expressions and substituting templates skipped. */
export function stringLiterals(source: string): StringLiteral[] {
  const literals: StringLiteral[] = [];
  let line = 1;
  let i = 0;
  let previous = "";
  /** Open `${` of templates: the template's brace depth when its substitution started. */
  const templates: number[] = [];
  let depth = 0;

  const advance = (to: number) => {
    for (let k = i; k < to; k++) if (source[k] === "\n") line++;
    i = to;
  };
  /** Reads a template's text from `i` (just after "`" or "}") to its end or its next `${`. */
  const templatePart = (startLine: number, whole: boolean) => {
    let text = "";
    while (i < source.length) {
      const c = source[i] as string;
      if (c === "\\") {
        text += source.slice(i, i + 2);
        advance(i + 2);
      } else if (c === "`") {
        advance(i + 1);
        if (whole) literals.push({ value: text, line: startLine });
        return;
      } else if (c === "$" && source[i + 1] === "{") {
        advance(i + 2);
        templates.push(depth);
        depth++;
        return;
      } else {
        text += c;
        advance(i + 1);
      }
    }
  };

  while (i < source.length) {
    const c = source[i] as string;
    const next = source[i + 1];
    if (c === "/" && next === "/") {
      const end = source.indexOf("\n", i);
      advance(end === -1 ? source.length : end);
    } else if (c === "/" && next === "*") {
      const end = source.indexOf("*/", i + 2);
      advance(end === -1 ? source.length : end + 2);
    } else if (c === '"' || c === "'") {
      const startLine = line;
      let k = i + 1;
      let text = "";
      while (k < source.length && source[k] !== c && source[k] !== "\n") {
        if (source[k] === "\\") {
          text += source.slice(k, k + 2);
          k += 2;
        } else {
          text += source[k];
          k++;
        }
      }
      advance(k + 1);
      literals.push({ value: text, line: startLine });
      previous = c;
    } else if (c === "`") {
      advance(i + 1);
      templatePart(line, true);
      previous = "`";
    } else if (c === "/" && BEFORE_REGEX.has(previous)) {
      let k = i + 1;
      let inClass = false;
      while (k < source.length && source[k] !== "\n") {
        const r = source[k];
        if (r === "\\") k++;
        else if (r === "[") inClass = true;
        else if (r === "]") inClass = false;
        else if (r === "/" && !inClass) break;
        k++;
      }
      advance(k + 1);
      previous = "/regex";
    } else if (c === "{") {
      depth++;
      advance(i + 1);
      previous = c;
    } else if (c === "}") {
      depth--;
      advance(i + 1);
      if (templates.length > 0 && templates[templates.length - 1] === depth) {
        templates.pop();
        // The rest of a template that had a substitution: never one code, so not recorded.
        templatePart(line, false);
        previous = "`";
      } else previous = c;
    } else {
      if (!/\s/.test(c)) previous = /[\w$)\]]/.test(c) ? "word" : c;
      if (/[\w$]/.test(c)) {
        let k = i;
        while (k < source.length && /[\w$]/.test(source[k] as string)) k++;
        const word = source.slice(i, k);
        // After these keywords an expression starts, so a `/` opens a regular expression.
        previous = ["return", "typeof", "case", "throw", "in", "of", "void", "yield", "await"].includes(word)
          ? "("
          : "word";
        advance(k);
      } else advance(i + 1);
    }
  }
  return literals;
}

/** The error codes `source` writes inline instead of naming their constants. */
export function inlineErrorCodes(source: string, codes: ReadonlySet<string>): InlineCode[] {
  return stringLiterals(source)
    .filter((literal) => codes.has(literal.value))
    .map((literal) => ({ line: literal.line, code: literal.value }));
}
