import type { z } from "zod";
import { TenorError } from "../errors/tenor-error.js";
import { DEFINITION_NAME_PATTERN, DeclaredDefinitions, DefinitionRegistry } from "./definitions.js";
import { ENGINE_ERRORS } from "./error-codes.js";
import type { ErrorClass } from "./refusals.js";
import type { RetryPolicy } from "./retry-policy.js";
import type { AnyServiceKey, ServiceLookup } from "./services.js";

/**
 * The worker pool an activity runs in. Activities that share a queue share its pool, so they must
 * agree on its settings.
 */
export interface ActivityQueueOptions {
  /** Queue name (lowercase, dashes), e.g. "signing". */
  name: string;
  /** Jobs one runner process works on at once on this queue. Default 1. */
  concurrency?: number;
  /** At most `max` jobs per `durationMs` across all runners (BullMQ's rate limiter). */
  limiter?: { max: number; durationMs: number };
}

export interface ActivityInfo extends ServiceLookup {
  executionId: string;
  position: number;
  /** 1 for the first attempt of this dispatch. */
  attempt: number;
}

export interface ActivitySpec<I, O> {
  /** Stable name, recorded in the journal. */
  name: string;
  queue: ActivityQueueOptions;
  /** Encodes the input into the journal and decodes it for the worker. */
  input: z.ZodType<I, unknown>;
  /** Encodes the result into the journal and decodes it on replay. */
  output: z.ZodType<O, unknown>;
  /** Immediate retries inside the activity's job; exhausting them suspends the execution. */
  retry?: RetryPolicy;
  /** Refusals: journaled as the outcome and re-raised as the same class. */
  nonRetryable?: readonly ErrorClass[];
  /** The services `run` uses (`info.service(key)`); see WorkflowSpec.services. */
  services?: readonly AnyServiceKey[];
  run(input: I, info: ActivityInfo): Promise<O>;
}

/**
 * An activity that runs as a child job on its own queue, with that queue's worker pool,
 * concurrency and rate limit (signing, provider calls). `ctx.step(name, activity, { input })`
 * journals its input, dispatches it and waits; the activity worker journals its outcome.
 */
export interface ActivityDefinition<I = unknown, O = unknown> extends Readonly<ActivitySpec<I, O>> {
  readonly kind: "activity";
}

// biome-ignore lint/suspicious/noExplicitAny: input and output are invariant; a list of activities must erase them.
export type AnyActivity = ActivityDefinition<any, any>;

const QUEUE_NAME_PATTERN = /^[a-z][a-z0-9-]*$/;
const declared = new DeclaredDefinitions<AnyActivity>();

export function defineActivity<I, O>(spec: ActivitySpec<I, O>): ActivityDefinition<I, O> {
  const invalid = (field: string, value: unknown, rule: string) =>
    new TenorError(
      ENGINE_ERRORS.WORKFLOW_DEFINITION_INVALID,
      `activity ${spec.name}: ${field} ${JSON.stringify(value)} ${rule}`,
      {
        details: { field, value },
      },
    );
  if (!DEFINITION_NAME_PATTERN.test(spec.name))
    throw invalid("name", spec.name, `must match ${DEFINITION_NAME_PATTERN}`);
  if (!QUEUE_NAME_PATTERN.test(spec.queue.name))
    throw invalid("queue.name", spec.queue.name, `must match ${QUEUE_NAME_PATTERN}`);
  const concurrency = spec.queue.concurrency ?? 1;
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw invalid("queue.concurrency", concurrency, "must be an integer ≥ 1");
  const limiter = spec.queue.limiter;
  if (
    limiter &&
    (!Number.isInteger(limiter.max) ||
      limiter.max < 1 ||
      !Number.isInteger(limiter.durationMs) ||
      limiter.durationMs < 1)
  ) {
    throw invalid("queue.limiter", limiter, "must have integer max ≥ 1 and durationMs ≥ 1");
  }
  const definition = Object.freeze({ ...spec, kind: "activity" as const });
  declared.add(definition as AnyActivity);
  return definition;
}

export function isActivity(value: unknown): value is AnyActivity {
  return typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "activity";
}

/** The activities a runner works on, grouped by queue. */
export class ActivityRegistry extends DefinitionRegistry<AnyActivity> {
  private readonly byQueue = new Map<string, { options: ActivityQueueOptions; activities: AnyActivity[] }>();

  constructor(activities: readonly AnyActivity[]) {
    super(
      {
        noun: "activity",
        plural: "activities",
        codes: {
          duplicate: ENGINE_ERRORS.WORKFLOW_DEFINITION_INVALID,
          unknown: ENGINE_ERRORS.ACTIVITY_UNKNOWN,
          notRegistered: ENGINE_ERRORS.WORKFLOW_NOT_REGISTERED,
        },
      },
      declared,
      activities,
    );
    for (const activity of activities) {
      const group = this.byQueue.get(activity.queue.name);
      if (!group) {
        this.byQueue.set(activity.queue.name, { options: activity.queue, activities: [activity] });
        continue;
      }
      if (JSON.stringify(normalise(group.options)) !== JSON.stringify(normalise(activity.queue))) {
        throw new TenorError(
          ENGINE_ERRORS.WORKFLOW_DEFINITION_INVALID,
          `activities ${group.activities[0]?.name} and ${activity.name} share queue ${activity.queue.name} with different settings`,
          { details: { queue: activity.queue.name } },
        );
      }
      group.activities.push(activity);
    }
  }

  queues(): { options: ActivityQueueOptions; activities: readonly AnyActivity[] }[] {
    return [...this.byQueue.values()];
  }
}

function normalise(options: ActivityQueueOptions) {
  return { name: options.name, concurrency: options.concurrency ?? 1, limiter: options.limiter ?? null };
}
