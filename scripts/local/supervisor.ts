import { type ChildProcess, spawn } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { toTenorError } from "../../src/errors/tenor-error.js";
import { describeExit, SupervisorError, SupervisorErrorCode } from "./supervisor-errors.js";
import {
  LineSplitter,
  type LineStyle,
  labelWidth,
  type MessageLevel,
  prefixLine,
  supervisorLine,
} from "./supervisor-lines.js";
import {
  type ResolvedSupervisorOptions,
  resolveSupervisorOptions,
  type SupervisedRole,
  type SupervisorOptions,
} from "./supervisor-options.js";
import { waitForReady } from "./supervisor-readiness.js";

export type {
  ReadinessOptions,
  RoleCommand,
  SupervisedRole,
  SupervisorOptions,
} from "./supervisor-options.js";
export { SUPERVISED_ROLES } from "./supervisor-options.js";

/** How the supervisor ended: exit code 0 only if every role stopped on request, in time, cleanly. */
export interface SupervisorOutcome {
  /** 0 after a clean requested stop; 1 after any failure. */
  readonly exitCode: 0 | 1;
  /** Every failure seen, first one first (the cause; later ones are often consequences). */
  readonly failures: readonly SupervisorError[];
}

/** A running local stack: one child process per role. */
export interface Supervisor {
  /** The started children, in start order; `pid` is undefined if the spawn itself failed. */
  readonly children: readonly { readonly role: SupervisedRole; readonly pid: number | undefined }[];
  /** Starts a graceful stop: SIGTERM to every role, SIGKILL after the grace period. Idempotent. */
  stop(reason: string): void;
  /** Sends SIGKILL to every role still running, now (for a second Ctrl-C). */
  kill(reason: string): void;
  /** Settles once every child has exited and its output has been written. Never rejects. */
  readonly done: Promise<SupervisorOutcome>;
}

/** A child that exited with one of these during a requested stop stopped cleanly. */
const CLEAN_STOP_CODES = new Set([0, 130, 143]);
const CLEAN_STOP_SIGNALS = new Set(["SIGTERM", "SIGINT"]);
/**
 * How long to wait for a child's pipes to close after it exited, in ms. A grandchild holding the
 * pipes open must not keep the supervisor alive forever.
 */
const PIPE_CLOSE_WAIT_MS = 2_000;

interface ChildState {
  readonly role: SupervisedRole;
  readonly process: ChildProcess;
  exited: boolean;
  closed: boolean;
  spawnError: Error | undefined;
  killedAfterGrace: boolean;
}

/**
 * Starts each role as its own child process (the command plus `DAPI_ROLE=<role>`), prefixes every
 * output line with the role's name, and keeps the roles' lifetimes tied together: when any role
 * exits without being asked to, the supervisor reports it and stops the others.
 *
 * It installs no signal handlers; the caller wires SIGINT/SIGTERM to {@link Supervisor.stop}.
 *
 * @throws SupervisorError `SUPERVISOR_INVALID_OPTIONS` before starting anything if options are bad.
 */
export function startSupervisor(options: SupervisorOptions): Supervisor {
  const resolved = resolveSupervisorOptions(options);
  const style: LineStyle = { width: labelWidth(resolved.roles), colour: resolved.colour };
  const failures: SupervisorError[] = [];
  const stopSignal = new AbortController();
  let stopping = false;
  let graceTimer: NodeJS.Timeout | undefined;
  let settle: (outcome: SupervisorOutcome) => void = () => {};
  const done = new Promise<SupervisorOutcome>((resolve) => {
    settle = resolve;
  });

  const say = (message: string, level: MessageLevel = "info") =>
    resolved.stderr.write(supervisorLine(message, level, style));
  const fail = (error: SupervisorError) => {
    failures.push(error);
    say(`ERROR ${error.code}: ${error.message}`, "error");
  };
  const running = () => states.filter((state) => !state.exited);

  const stop = (reason: string) => {
    if (stopping) return;
    stopping = true;
    stopSignal.abort();
    const live = running();
    if (live.length > 0) {
      say(`stopping ${live.map((s) => s.role).join(", ")} (${reason}); SIGKILL after ${resolved.graceMs} ms`);
    }
    for (const state of live) state.process.kill("SIGTERM");
    graceTimer = setTimeout(
      () => killRemaining(`did not stop within ${resolved.graceMs} ms`),
      resolved.graceMs,
    );
  };

  const killRemaining = (reason: string) => {
    for (const state of running()) {
      state.killedAfterGrace = true;
      fail(
        new SupervisorError(
          SupervisorErrorCode.killedAfterGrace,
          `role ${state.role} ${reason}; sent SIGKILL`,
          {
            role: state.role,
          },
        ),
      );
      state.process.kill("SIGKILL");
    }
  };

  const onClose = (state: ChildState, code: number | null, signal: NodeJS.Signals | null) => {
    state.exited = true;
    state.closed = true;
    reportExit(state, code, signal);
    if (states.every((s) => s.closed)) finish();
  };

  const reportExit = (state: ChildState, code: number | null, signal: NodeJS.Signals | null) => {
    const how = describeExit(code, signal);
    if (state.spawnError !== undefined) {
      fail(
        new SupervisorError(
          SupervisorErrorCode.spawnFailed,
          `role ${state.role} could not start: ${state.spawnError.message}`,
          { role: state.role },
        ),
      );
      stop(`role ${state.role} could not start`);
    } else if (!stopping && signal === "SIGINT") {
      // Ctrl-C reaches the whole process group; a role may die of it before our own handler runs.
      say(`role ${state.role} was interrupted (${how})`);
      stop("interrupted");
    } else if (!stopping) {
      fail(SupervisorError.childExited(state.role, code, signal));
      stop(`role ${state.role} exited`);
    } else if (state.killedAfterGrace) {
      say(`role ${state.role} killed (${how})`);
    } else if (
      (code !== null && CLEAN_STOP_CODES.has(code)) ||
      (signal !== null && CLEAN_STOP_SIGNALS.has(signal))
    ) {
      say(`role ${state.role} stopped (${how})`);
    } else {
      fail(
        new SupervisorError(
          SupervisorErrorCode.shutdownFailed,
          `role ${state.role} failed while stopping (${how})`,
          {
            role: state.role,
            exitCode: code,
            signal,
          },
        ),
      );
    }
  };

  const finish = () => {
    clearTimeout(graceTimer);
    stopSignal.abort();
    const exitCode = failures.length === 0 ? 0 : 1;
    if (exitCode === 0) say("all roles stopped", "success");
    else say(`all roles stopped; exiting ${exitCode} because ${failures[0]!.message}`, "error");
    settle({ exitCode, failures });
  };

  const states: ChildState[] = resolved.roles.map((role) => spawnRole(role, resolved, style));
  for (const state of states) {
    state.process.on("error", (error) => {
      // Also emitted when a kill fails on an already-dead child; only the first error matters.
      if (state.process.pid === undefined) state.spawnError ??= error;
    });
    state.process.on("exit", () => {
      state.exited = true;
      setTimeout(() => destroyPipes(state.process), PIPE_CLOSE_WAIT_MS).unref();
    });
    state.process.on("close", (code, signal) => onClose(state, code, signal));
    if (state.process.pid !== undefined) say(`started ${state.role} (pid ${state.process.pid})`);
  }

  if (resolved.readiness !== undefined) {
    const readiness = resolved.readiness;
    waitForReady({ ...readiness, targets: readiness.urls, signal: stopSignal.signal }).then(
      (result) => {
        if (result !== "ready") return;
        const where = [...readiness.urls].map(([role, url]) => `${role} ${url}`).join(", ");
        say(`all roles ready: ${where}`, "success");
        readiness.onReady?.(readiness.urls);
      },
      (error: unknown) => {
        fail(error instanceof SupervisorError ? error : wrapUnexpected(error));
        stop("readiness failed");
      },
    );
  }

  return {
    children: states.map((state) => ({ role: state.role, pid: state.process.pid })),
    stop,
    kill: (reason) => {
      stop(reason);
      killRemaining(`was killed (${reason})`);
    },
    done,
  };
}

/** Spawns one role with its output piped through a per-stream line prefixer. */
function spawnRole(role: SupervisedRole, options: ResolvedSupervisorOptions, style: LineStyle): ChildState {
  const child = spawn(options.command.file, [...options.command.args], {
    cwd: options.cwd,
    env: { ...options.env, DAPI_ROLE: role },
    // No stdin: a role must never wait on the terminal, and Ctrl-C belongs to the supervisor.
    stdio: ["ignore", "pipe", "pipe"],
  });
  forwardLines(role, child.stdout, options.stdout, style);
  forwardLines(role, child.stderr, options.stderr, style);
  return {
    role,
    process: child,
    exited: false,
    closed: false,
    spawnError: undefined,
    killedAfterGrace: false,
  };
}

function forwardLines(role: string, from: Readable | null, to: Writable, style: LineStyle): void {
  if (from === null) return;
  const splitter = new LineSplitter();
  from.on("data", (chunk: Buffer) => {
    for (const line of splitter.push(chunk)) to.write(prefixLine(role, line, style));
  });
  from.on("end", () => {
    const rest = splitter.flush();
    if (rest !== undefined) to.write(prefixLine(role, rest, style));
  });
}

function destroyPipes(child: ChildProcess): void {
  child.stdout?.destroy();
  child.stderr?.destroy();
}

function wrapUnexpected(error: unknown): SupervisorError {
  const tenor = toTenorError(error);
  return new SupervisorError(SupervisorErrorCode.readyTimeout, `readiness polling failed: ${tenor.message}`);
}
