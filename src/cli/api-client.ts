import { TenorError } from "../errors/tenor-error.js";
import { CLI_ERRORS } from "./cli-error-codes.js";
import { type CliEnv, UsageError } from "./cli-io.js";

/** A problem+json answer of the API, carried as a TenorError with the API's own code. */
/** Its code is whatever the API answered, read back: not necessarily one this build knows. */
export class ApiProblem extends TenorError<string> {
  constructor(
    readonly status: number,
    code: string,
    detail: string,
    details: Record<string, unknown>,
  ) {
    super(code, `${status} ${code}: ${detail}`, { details });
  }
}

/**
 * The Platform API as the CLI calls it: a base URL and one bearer key (`TENOR_API_URL`,
 * `TENOR_API_KEY`). Every non-2xx answer becomes an ApiProblem naming status, code and detail.
 */
export class ApiClient {
  constructor(
    private readonly baseUrl: string,
    private readonly key: string,
  ) {}

  async get<T = unknown>(path: string): Promise<T> {
    return (await this.call<T>("GET", path)).body;
  }

  async post<T = unknown>(path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    return (await this.call<T>("POST", path, body, headers)).body;
  }

  /**
   * A POST whose answer's headers matter too (a start answered from its Idempotency-Key says so in
   * `Idempotent-Replayed`).
   */
  async postAnswer<T = unknown>(
    path: string,
    body: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ body: T; headers: Headers }> {
    return this.call<T>("POST", path, body, headers);
  }

  private async call<T>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ body: T; headers: Headers }> {
    let res: Response;
    try {
      res = await fetch(new URL(path, this.baseUrl), {
        method,
        headers: {
          authorization: `Bearer ${this.key}`,
          accept: "application/json",
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...headers,
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error) {
      throw new TenorError(
        CLI_ERRORS.API_UNREACHABLE,
        `cannot reach the API at ${this.baseUrl}: ${(error as Error).message}`,
        {
          retryable: true,
          details: { url: this.baseUrl },
        },
      );
    }
    const text = await res.text();
    let json: unknown = null;
    try {
      json = text === "" ? null : JSON.parse(text);
    } catch {
      json = { detail: text.slice(0, 200) };
    }
    if (!res.ok) {
      const problem = (json ?? {}) as { code?: string; detail?: string; details?: Record<string, unknown> };
      throw new ApiProblem(
        res.status,
        problem.code ?? `HTTP_${res.status}`,
        problem.detail ?? res.statusText,
        problem.details ?? {},
      );
    }
    return { body: json as T, headers: res.headers };
  }
}

/** The client from `TENOR_API_URL` (http or https) and `TENOR_API_KEY`; a UsageError naming what is missing. */
export function apiClientFromEnv(env: CliEnv): ApiClient {
  const url = env.TENOR_API_URL;
  const key = env.TENOR_API_KEY;
  if (!url || !/^https?:\/\/[^\s]+$/.test(url)) {
    throw new UsageError(
      `TENOR_API_URL must be the api's base URL (http:// or https://), got ${url ? JSON.stringify(url) : "nothing"}`,
    );
  }
  if (!key) throw new UsageError("TENOR_API_KEY must hold an API key (npm run tenor -- keys create ...)");
  return new ApiClient(url, key);
}
