import { type AbiEvent, type Hex, parseAbiItem } from "viem";
import { addressText } from "../values/address.js";
import type { LedgerScopeKind } from "./ledger-scope.js";
import type { LedgerLogs, LogOrigin } from "./store/domain-logs.js";

/**
 * The events the Ledger Index decodes, per scope kind (signatures fixed with the contracts' authors:
 * the indexer and the flows must agree on them). A contract's logs are read for its kind's events only.
 */
export const LEDGER_EVENTS = {
  Transfer: parseAbiItem("event Transfer(address indexed from, address indexed to, uint256 value)"),
  FeedCreated: parseAbiItem(
    "event FeedCreated(address indexed asset, address indexed owner, uint8 decimals)",
  ),
  ObservationSubmitted: parseAbiItem(
    "event ObservationSubmitted(uint80 indexed roundId, int256 answer, uint256 updatedAt)",
  ),
  StalenessBoundSet: parseAbiItem(
    "event StalenessBoundSet(address indexed asset, address indexed feed, uint256 maxAgeSeconds)",
  ),
  SettingChanged: parseAbiItem("event SettingChanged(bytes32 indexed key, bytes32 value)"),
} as const;

type EventName = keyof typeof LEDGER_EVENTS;

const EVENTS_OF_KIND: Record<LedgerScopeKind, readonly EventName[]> = {
  erc20: ["Transfer"],
  "price-feed": ["FeedCreated", "ObservationSubmitted"],
  "price-resolver": ["StalenessBoundSet"],
  "system-settings": ["SettingChanged"],
};

/** The events to read for contracts of `kinds` (one topic-0 alternative each), in a fixed order. */
export function eventsOf(kinds: Iterable<LedgerScopeKind>): AbiEvent[] {
  const names = new Set<EventName>();
  for (const kind of kinds) for (const name of EVENTS_OF_KIND[kind]) names.add(name);
  return (Object.keys(LEDGER_EVENTS) as EventName[])
    .filter((name) => names.has(name))
    .map((name) => LEDGER_EVENTS[name]);
}

/** A log as viem's `getLogs` returns it with `strict: true` and the events above. */
export interface RawLedgerLog {
  eventName: string;
  args: Record<string, unknown>;
  address: Hex;
  /** Topic 0 (the event's selector) and the indexed arguments. */
  topics: readonly Hex[];
  blockNumber: bigint;
  logIndex: number;
  blockHash: Hex;
  transactionHash: Hex;
}

/** Addresses enter the Ledger Index as lowercase text, the form its tables key on. */
const lower = (value: unknown) => addressText(value as string);

/**
 * Sorts decoded logs into the lists the store takes, each in (blockNumber, logIndex) order.
 * Which organisation's scope admits a log (by contract, kind and height) is decided by the
 * store inside the write transaction, not here.
 */
export function toLedgerLogs(raw: readonly RawLedgerLog[]): LedgerLogs {
  const out: LedgerLogs = { transfers: [], feeds: [], observations: [], bounds: [], settings: [] };
  const sorted = [...raw].sort((a, b) =>
    a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1,
  );
  for (const log of sorted) {
    const origin: LogOrigin = {
      blockNumber: log.blockNumber,
      logIndex: log.logIndex,
      blockHash: log.blockHash,
      txHash: log.transactionHash,
    };
    const a = log.args;
    const emitter = addressText(log.address);
    switch (log.eventName as EventName) {
      case "Transfer":
        out.transfers.push({
          ...origin,
          token: emitter,
          from: lower(a.from),
          to: lower(a.to),
          value: a.value as bigint,
        });
        break;
      case "FeedCreated":
        out.feeds.push({
          ...origin,
          feed: emitter,
          asset: lower(a.asset),
          owner: lower(a.owner),
          decimals: Number(a.decimals),
        });
        break;
      case "ObservationSubmitted":
        out.observations.push({
          ...origin,
          feed: emitter,
          roundId: a.roundId as bigint,
          answer: a.answer as bigint,
          updatedAt: a.updatedAt as bigint,
        });
        break;
      case "StalenessBoundSet":
        out.bounds.push({
          ...origin,
          resolver: emitter,
          asset: lower(a.asset),
          feed: lower(a.feed),
          maxAgeSeconds: a.maxAgeSeconds as bigint,
        });
        break;
      case "SettingChanged":
        out.settings.push({ ...origin, contract: emitter, key: lower(a.key), value: lower(a.value) });
        break;
    }
  }
  return out;
}
