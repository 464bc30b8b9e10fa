import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Address } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { parse as parseYaml } from "yaml";
import { DEV_EVIDENCE_KEY_FILE, DEV_WEBHOOK_KEY, DEV_WEBHOOK_KEY_ENV } from "../dev-defaults.js";
import { startAnvilProcess } from "./anvil-process.js";
import { deployPriceResolver } from "./price-resolver.js";

/**
 * The demo chain of `npm run local` and the quick start: when the configuration names no chain,
 * a local anvil is started, a PriceResolver owned by the demo signer is deployed on it, and the
 * roles are handed a configuration that adds the chain, a demo signer for organisation `demo` and
 * the `demo-bond` asset template naming that resolver. A development convenience only: nothing in
 * `src/` knows it.
 */

/** anvil's default chain id and port. */
export const DEV_CHAIN_ID = 31337;
export const DEV_CHAIN_DEFAULT_PORT = 8545;

/** Environment variable naming the demo signer's key, and that key: anvil's first dev account (public, funded). */
export const DEV_SIGNER_KEY_ENV = "TENOR_DEV_CHAIN_KEY";
export { DEV_WEBHOOK_KEY_ENV };

const DEV_SIGNER_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";

/** The asset template the quick start creates its bond from. */
export const DEV_ASSET_TEMPLATE = "demo-bond";
/** The demo bond's staleness bound: a day. */
const DEV_STALENESS_SECONDS = 86_400;

export interface DevChain {
  readonly url: string;
  readonly chainId: number;
  /** The PriceResolver the demo asset template names (owned by the demo signer). */
  readonly resolver: Address;
  /** The environment the roles run with: TENOR_CONFIG names a file with the chain added. */
  readonly env: Record<string, string | undefined>;
  stop(): Promise<void>;
}

/**
 * True when the configuration file (TENOR_CONFIG, if any) configures no chain and
 * `TENOR_DEV_CHAIN` is not `off`.
 */
export function needsDevChain(env: Readonly<Record<string, string | undefined>>): boolean {
  if (env.TENOR_DEV_CHAIN === "off") return false;
  const document = readConfigDocument(env.TENOR_CONFIG);
  return !Array.isArray(document.chains) || document.chains.length === 0;
}

/**
 * Where the demo chain keeps its state between runs: `TENOR_DEV_CHAIN_STATE`, default
 * `.tenor/dev-chain-state.json` in the working directory. The quick start's database outlives a
 * run (it holds the nonces Tenor reserved for the demo signer), so the chain must too: a fresh
 * chain under an old database would leave every demo transaction waiting behind nonces the new
 * chain never saw. `TENOR_DEV_CHAIN_STATE=off` starts a fresh chain each time.
 */
export function devChainStatePath(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const value = env.TENOR_DEV_CHAIN_STATE;
  if (value === "off") return undefined;
  return path.resolve(value && value !== "" ? value : path.join(".tenor", "dev-chain-state.json"));
}

/** `TENOR_DEV_CHAIN_PORT`, default 8545; anything but a port number is refused, naming it. */
export function devChainPort(env: Readonly<Record<string, string | undefined>>): number {
  const text = env.TENOR_DEV_CHAIN_PORT;
  if (text === undefined || text === "") return DEV_CHAIN_DEFAULT_PORT;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) {
    throw new Error(`TENOR_DEV_CHAIN_PORT = ${JSON.stringify(text)}: must be a port number 1–65535`);
  }
  return port;
}

/**
 * Starts anvil on `port` and writes the roles' configuration: the user's file (when TENOR_CONFIG
 * names one) with the demo chain, and the `demo` signer unless a signer with that id exists.
 */
export async function startDevChain(options: {
  env: Readonly<Record<string, string | undefined>>;
  port: number;
  timeoutMs?: number;
}): Promise<DevChain> {
  const statePath = devChainStatePath(options.env);
  if (statePath) mkdirSync(path.dirname(statePath), { recursive: true });
  const node = await startAnvilProcess({
    port: options.port,
    chainId: DEV_CHAIN_ID,
    ...(statePath ? { statePath } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
  });
  const url = node.url;
  let resolver: Address;
  try {
    resolver = await deployPriceResolver({
      url,
      deployerKey: DEV_SIGNER_KEY,
      owner: privateKeyToAccount(DEV_SIGNER_KEY).address,
    });
  } catch (error) {
    await node.stop();
    throw error;
  }
  const directory = mkdtempSync(path.join(tmpdir(), "tenor-dev-chain-"));
  const file = path.join(directory, "tenor.json");
  // JSON is YAML: the roles read it like any configuration file.
  writeFileSync(
    file,
    JSON.stringify(withDevChain(readConfigDocument(options.env.TENOR_CONFIG), url, resolver), null, 2),
  );
  return {
    url,
    chainId: DEV_CHAIN_ID,
    resolver,
    env: {
      ...options.env,
      TENOR_CONFIG: file,
      [DEV_SIGNER_KEY_ENV]: DEV_SIGNER_KEY,
      [DEV_WEBHOOK_KEY_ENV]: DEV_WEBHOOK_KEY,
    },
    async stop() {
      await node.stop();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/**
 * The configuration document with the demo chain (and signer) added, with `resolver` the
 * `demo-bond` asset template (unless the document has a template of that id), and the
 * development webhook secret key and evidence signing key (unless the document configures its own).
 */
export function withDevChain(
  document: Record<string, unknown>,
  url: string,
  resolver?: Address,
): Record<string, unknown> {
  const signers = Array.isArray(document.signers) ? [...document.signers] : [];
  if (!signers.some((s) => (s as { id?: unknown })?.id === "demo")) {
    signers.push({ id: "demo", kind: "local", orgId: "demo", privateKey: { env: DEV_SIGNER_KEY_ENV } });
  }
  const templates = Array.isArray(document.assetTemplates) ? [...document.assetTemplates] : [];
  if (resolver && !templates.some((t) => (t as { id?: unknown })?.id === DEV_ASSET_TEMPLATE)) {
    templates.push({
      id: DEV_ASSET_TEMPLATE,
      kind: "bond",
      orgId: "demo",
      chainId: DEV_CHAIN_ID,
      signerId: "demo",
      resolver,
      stalenessSeconds: DEV_STALENESS_SECONDS,
    });
  }
  return {
    ...document,
    chains: [{ id: DEV_CHAIN_ID, name: "local", rpcUrls: [url], finality: { depth: 1 } }],
    signers,
    ...(templates.length > 0 ? { assetTemplates: templates } : {}),
    webhooks: withDevWebhookKey(document.webhooks),
    evidence: withDevEvidenceKey(document.evidence),
  };
}

/**
 * Webhook settings with the development key, so subscriptions can be created locally, unless the
 * document configures keys (or plain-text secrets) of its own.
 */
function withDevWebhookKey(webhooks: unknown): Record<string, unknown> {
  const own = webhooks && typeof webhooks === "object" ? (webhooks as Record<string, unknown>) : {};
  const configured =
    (Array.isArray(own.secretKeys) && own.secretKeys.length > 0) || own.plaintextSecrets === true;
  return configured ? own : { ...own, secretKeys: [{ id: "dev", key: { env: DEV_WEBHOOK_KEY_ENV } }] };
}

/** Evidence settings with the development signing key, so exports work locally, unless the document names a key. */
function withDevEvidenceKey(evidence: unknown): Record<string, unknown> {
  const own = evidence && typeof evidence === "object" ? (evidence as Record<string, unknown>) : {};
  return own.signingKey ? own : { ...own, signingKey: { file: DEV_EVIDENCE_KEY_FILE } };
}

function readConfigDocument(file: string | undefined): Record<string, unknown> {
  if (!file) return {};
  // A file the roles cannot read or parse is theirs to report, with the key and the rule.
  try {
    const document = parseYaml(readFileSync(file, "utf8")) as unknown;
    return document && typeof document === "object" && !Array.isArray(document)
      ? (document as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}
