import { StringDecoder } from "node:string_decoder";

/**
 * Pure text handling for the local supervisor: splitting a child's byte stream into lines and
 * prefixing each line with the role that wrote it. No I/O here so every rule is unit-testable.
 */

/** The name the supervisor uses for its own lines, so they line up with the roles' lines. */
export const SUPERVISOR_LABEL = "supervisor";

/** ANSI SGR codes used by the supervisor. */
const ANSI = {
  reset: "\u001b[0m",
  bold: "\u001b[1m",
  red: "\u001b[31m",
  green: "\u001b[32m",
  yellow: "\u001b[33m",
  magenta: "\u001b[35m",
  cyan: "\u001b[36m",
} as const;

/**
 * One colour per label, fixed rather than assigned by start order so a role keeps its colour
 * whichever subset of roles is started. The supervisor's own label is bold so it stands apart.
 */
const LABEL_COLOURS: Readonly<Record<string, string>> = {
  api: ANSI.cyan,
  runner: ANSI.magenta,
  indexer: ANSI.yellow,
  [SUPERVISOR_LABEL]: ANSI.bold,
};

/** How a prefixed line looks: the label column width and whether ANSI colour is emitted. */
export interface LineStyle {
  /** Width the label is padded to, in characters; labels longer than this are not cut. */
  readonly width: number;
  /** Emit ANSI colour codes. Decide with {@link shouldUseColour}. */
  readonly colour: boolean;
}

/** Severity of a supervisor message; `error` is printed in red when colour is on. */
export type MessageLevel = "info" | "success" | "error";

/**
 * Whether to colour output, following https://no-color.org: a non-empty `NO_COLOR` always wins,
 * then colour only when the stream is a terminal (pipes and files get plain text).
 */
export function shouldUseColour(
  stream: { isTTY?: boolean },
  env: Readonly<Record<string, string | undefined>>,
) {
  const noColour = env.NO_COLOR;
  if (noColour !== undefined && noColour !== "") return false;
  return stream.isTTY === true;
}

/** The label column width that fits every given label and the supervisor's own. */
export function labelWidth(labels: readonly string[]): number {
  return Math.max(SUPERVISOR_LABEL.length, ...labels.map((label) => label.length));
}

/** Formats one line (without its newline) as `label | text`, coloured by label when enabled. */
export function prefixLine(label: string, line: string, style: LineStyle): string {
  const padded = label.padEnd(style.width);
  if (!style.colour) return `${padded} | ${line}\n`;
  const colour = LABEL_COLOURS[label] ?? ANSI.green;
  return `${colour}${padded} |${ANSI.reset} ${line}\n`;
}

/**
 * Formats a message from the supervisor itself. Errors are red so a crashed role is hard to miss
 * among a busy stream of role logs.
 */
export function supervisorLine(message: string, level: MessageLevel, style: LineStyle): string {
  if (!style.colour || level === "info") return prefixLine(SUPERVISOR_LABEL, message, style);
  const colour = level === "error" ? `${ANSI.bold}${ANSI.red}` : ANSI.green;
  return prefixLine(SUPERVISOR_LABEL, `${colour}${message}${ANSI.reset}`, style);
}

/**
 * Splits a byte stream into complete lines. Chunks from a pipe end anywhere, including inside a
 * line or inside a multi-byte UTF-8 character, so text is held back until its newline arrives.
 */
export class LineSplitter {
  private readonly decoder = new StringDecoder("utf8");
  private pending = "";

  /** Feeds one chunk and returns the lines it completed, without their `\n` or `\r\n`. */
  push(chunk: Buffer | string): string[] {
    const text = this.pending + (typeof chunk === "string" ? chunk : this.decoder.write(chunk));
    const parts = text.split("\n");
    this.pending = parts.pop() ?? "";
    return parts.map(stripCarriageReturn);
  }

  /** Returns the unterminated last line, if any, once the stream has ended. */
  flush(): string | undefined {
    const rest = this.pending + this.decoder.end();
    this.pending = "";
    return rest === "" ? undefined : stripCarriageReturn(rest);
  }
}

function stripCarriageReturn(line: string): string {
  return line.endsWith("\r") ? line.slice(0, -1) : line;
}
