import { describe, expect, it } from "vitest";
import { chainWriteOf, waitUntilIndexed } from "../../src/api/executions/indexed-wait.js";

/** Which finished results `Prefer: wait` holds for the Ledger Index (docs/ledger-index.md, "Read-after-write"). */
describe("chainWriteOf", () => {
  it("takes the block from the output and the chain from the output, else from the input", () => {
    expect(chainWriteOf({ chainId: 5, blockNumber: "12" }, {})).toEqual({ chainId: 5, blockNumber: 12n });
    expect(chainWriteOf({ blockNumber: 9 }, { chainId: 31337 })).toEqual({ chainId: 31337, blockNumber: 9n });
    expect(chainWriteOf({ chainId: 1, blockNumber: "3" }, { chainId: 2 })).toEqual({
      chainId: 1,
      blockNumber: 3n,
    });
  });

  it("reports no write for results without a usable block or chain", () => {
    expect(chainWriteOf(null, { chainId: 1 })).toBeNull();
    expect(chainWriteOf("12", { chainId: 1 })).toBeNull();
    expect(chainWriteOf({ blockNumber: "0x10" }, { chainId: 1 })).toBeNull();
    expect(chainWriteOf({ blockNumber: -1 }, { chainId: 1 })).toBeNull();
    expect(chainWriteOf({ blockNumber: "7" }, {})).toBeNull();
    expect(chainWriteOf({ blockNumber: "7", chainId: "1" }, {})).toBeNull();
    expect(chainWriteOf([{ blockNumber: "7" }], { chainId: 1 })).toBeNull();
  });
});

describe("waitUntilIndexed", () => {
  it("resolves true once the height reaches the block, false at the deadline, and counts failed reads as not yet", async () => {
    let height = 4n;
    const reads: bigint[] = [];
    const reader = async () => {
      reads.push(height);
      if (reads.length === 1) throw new Error("connection reset");
      height += 1n;
      return height;
    };
    expect(await waitUntilIndexed(reader, { chainId: 1, blockNumber: 7n }, Date.now() + 60_000)).toBe(true);
    expect(height).toBe(7n);
    expect(await waitUntilIndexed(async () => null, { chainId: 1, blockNumber: 1n }, Date.now())).toBe(false);
  });
});
