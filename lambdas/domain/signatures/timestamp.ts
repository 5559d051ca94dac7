/**
 * Signed timestamps: how they are read and how far from the receiver's clock they may be.
 * The window is symmetric. A stale timestamp is a replay; a future one is either a clock
 * far off or a forger who captured a signature with a future timestamp, and both are refused.
 */

/** Largest accepted clock difference when a route sets none, in seconds (docs/architecture.md, "Answers to senders"). */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** Options of the schemes that sign a timestamp. */
export interface ToleranceOptions {
  /** Largest accepted difference between the signed timestamp and our clock, in seconds. @default 300 */
  readonly toleranceSeconds?: number;
}

/** Whole seconds since the epoch, written as 1 to 12 ASCII digits (no sign, no fraction). */
const UNIX_SECONDS = /^[0-9]{1,12}$/;

/**
 * Reads a Unix timestamp in seconds. Strict on purpose: parseInt would read "12abc" as 12,
 * and a header that is not a number is the sender's malformed header, not a stale one.
 */
export function parseUnixSeconds(text: string): number | undefined {
  return UNIX_SECONDS.test(text) ? Number(text) : undefined;
}

/** True when `timestampSeconds` is at most `toleranceSeconds` before or after `nowSeconds`. */
export function isWithinTolerance(timestampSeconds: number, nowSeconds: number, toleranceSeconds: number): boolean {
  return Math.abs(nowSeconds - timestampSeconds) <= toleranceSeconds;
}
