/**
 * The world beyond the receiver that the simulated action touches: a downstream payment API,
 * where the effects really happen, and the accounting ledger the action posts its entries to,
 * apart from the effects (lambdas/ledger/ledger.ts). The simulation's invariants count the
 * downstream's charges, not the ledger's entries: a ledger entry may stand without its effect
 * (posted before an effect that never came) and an effect without its entry (a post that failed
 * after it), as the contract for user code allows for a moment (README, "The contract for your code").
 *
 * The downstream keeps idempotency keys for a retention, as payment APIs do (Stripe, "Idempotent
 * requests", https://docs.stripe.com/idempotency: "Subsequent requests with the same key return
 * the same result"; keys may be removed "after they're at least 24 hours old", and "We generate a
 * new request if a key is reused after the original is pruned"). The contract asks for a
 * retention that covers the redrive horizon. Within it a charge with a known key makes nothing
 * new and answers the first charge again; after it, the same key charges anew. Some keys meet a
 * downstream with no idempotency at all: every charge is a new one, and only the reconciler's
 * compensating reverse takes a second one back.
 */
import { LEDGER_STATUS } from '../../lambdas/ledger/ledger.ts';
import type { Ledger, LedgerEntry, LedgerPages, NewLedgerEntry, ReverseResult } from '../../lambdas/ledger/ledger.ts';

/** One charge: an effect on the downstream. */
export interface Charge {
  readonly chargeId: string;
  readonly idempotencyKey: string;
  /** The action run (`ctx.attempt`) that made it. */
  readonly attempt: number;
  readonly at: number;
  /** The record generation (its receivedAt) whose run made it, when known. */
  readonly generation?: number;
  /** Made anew because the downstream had forgotten the key (its retention passed since the key's first charge). */
  readonly afterForgetting?: boolean;
  refundedAt?: number;
}

export class SimDownstream {
  readonly #charges: Charge[] = [];
  /** Per idempotency key: the charge its first request made, and when. */
  readonly #keys = new Map<string, Charge>();
  /**
   * Per idempotency key: the id its next new charge will have, once planned. Ids come from one
   * counter: a planned id is this key's alone, even when other keys charge before it does.
   */
  readonly #reserved = new Map<string, string>();
  #issued = 0;

  readonly #retentionMs: (idempotencyKey: string) => number;

  /** @param retentionMs how long an idempotency key is remembered; 0: no idempotency */
  constructor(retentionMs: (idempotencyKey: string) => number) {
    this.#retentionMs = retentionMs;
  }

  /** The charge a request with this key made or would make now: a remembered one, or a new one's id. */
  planned(idempotencyKey: string, at: number): string {
    const known = this.#remembered(idempotencyKey, at)?.chargeId;
    if (known !== undefined) return known;
    const reserved = this.#reserved.get(idempotencyKey) ?? `ch_${++this.#issued}`;
    this.#reserved.set(idempotencyKey, reserved);
    return reserved;
  }

  /** Charges once per idempotency key within its retention; a repeat answers the first charge. */
  charge(idempotencyKey: string, attempt: number, at: number, generation?: number): { readonly charge: Charge; readonly replayed: boolean } {
    const known = this.#remembered(idempotencyKey, at);
    if (known !== undefined) return { charge: known, replayed: true };
    const forgotten = this.#keys.has(idempotencyKey);
    const chargeId = this.#reserved.get(idempotencyKey) ?? `ch_${++this.#issued}`;
    this.#reserved.delete(idempotencyKey);
    const charge: Charge = { chargeId, idempotencyKey, attempt, at, ...(generation === undefined ? {} : { generation }), ...(forgotten ? { afterForgetting: true } : {}) };
    this.#charges.push(charge);
    if (this.#retentionMs(idempotencyKey) > 0) this.#keys.set(idempotencyKey, charge);
    return { charge, replayed: false };
  }

  /** Refunds a charge (a compensation); false when it was refunded already or never made. */
  refund(chargeId: string, at: number): boolean {
    const charge = this.#charges.find((c) => c.chargeId === chargeId);
    if (charge === undefined || charge.refundedAt !== undefined) return false;
    charge.refundedAt = at;
    return true;
  }

  /** A charge by id. */
  get(chargeId: string): Charge | undefined {
    return this.#charges.find((c) => c.chargeId === chargeId);
  }

  /** The charges of a key that stand (not refunded): its real effects. */
  standing(idempotencyKey: string): Charge[] {
    return this.#charges.filter((c) => c.idempotencyKey === idempotencyKey && c.refundedAt === undefined);
  }

  /** Every charge ever made for a key, refunded or not. */
  all(idempotencyKey: string): Charge[] {
    return this.#charges.filter((c) => c.idempotencyKey === idempotencyKey);
  }

  #remembered(idempotencyKey: string, at: number): Charge | undefined {
    const known = this.#keys.get(idempotencyKey);
    if (known === undefined || at - known.at >= this.#retentionMs(idempotencyKey)) return undefined;
    return known;
  }
}

/** A ledger entry, and the charge it was posted for. */
export interface SimLedgerEntry extends LedgerEntry {
  /** The downstream charge the entry books (for a post before the effect: the one it was about to make). */
  readonly chargeId: string;
}

/** What the reconciler's reversals did on the downstream. */
export interface ReversalLog {
  readonly entryId: string;
  /** The charge refunded, when the entry's own run had made it. */
  readonly refunded?: string;
}

/**
 * The ledger, in memory: entries with deterministic ids, read page by page, reversed once.
 * `reverse` is a compensating one that undoes exactly that entry's effect: it refunds the
 * entry's charge when the entry books it, i.e. the entry's own run made it, or a later run took
 * the booking over (takeOver); an entry whose run made no charge (posted before an effect that
 * never came, or booking a charge an earlier run made) is reversed with no refund.
 */
export class SimLedger implements Ledger {
  readonly #entries: SimLedgerEntry[] = [];
  /** Entry ids are never reused: a voided entry leaves the array, so its length cannot number them. */
  #posted = 0;
  readonly #downstream: SimDownstream;
  readonly #pageSize: number;
  readonly reversals: ReversalLog[] = [];

  constructor(downstream: SimDownstream, pageSize: number) {
    this.#downstream = downstream;
    this.#pageSize = Math.max(1, pageSize);
  }

  post(entry: NewLedgerEntry & { readonly chargeId?: string }): Promise<LedgerEntry> {
    const posted: SimLedgerEntry = { ...entry, chargeId: entry.chargeId ?? '', entryId: `e${String(++this.#posted).padStart(5, '0')}`, status: LEDGER_STATUS.posted };
    this.#entries.push(posted);
    return Promise.resolve(posted);
  }

  /** Removes an entry its own action posted before an effect that did not happen (the contract's "void"). */
  void(entryId: string): void {
    const index = this.#entries.findIndex((e) => e.entryId === entryId);
    if (index >= 0) this.#entries.splice(index, 1);
  }

  /** A posted entry that books this charge, if any. */
  booking(chargeId: string): SimLedgerEntry | undefined {
    return this.#entries.find((e) => e.chargeId === chargeId && e.status === LEDGER_STATUS.posted);
  }

  /** The posted entry whose effect this charge is (its maker's, or the one that took it over), if any. */
  holder(chargeId: string): SimLedgerEntry | undefined {
    const charge = this.#downstream.get(chargeId);
    if (charge === undefined) return undefined;
    return this.#entries.find((e) => e.chargeId === chargeId && e.status === LEDGER_STATUS.posted && this.#holds(e, charge));
  }

  /**
   * Makes `entryId` the entry whose effect this charge is, from now on: a run whose charge the
   * downstream replayed (an earlier run made it) books it with its own entry, and removes the
   * earlier booking (void), so that one entry names the effect and it is the completing run's.
   */
  takeOver(chargeId: string, entryId: string): void {
    this.#holders.set(chargeId, entryId);
  }

  /** Set by takeOver: the entry that holds each charge taken over. */
  readonly #holders = new Map<string, string>();

  #holds(entry: SimLedgerEntry, charge: Charge): boolean {
    const taken = this.#holders.get(charge.chargeId);
    return taken === undefined ? charge.attempt === entry.attempt : taken === entry.entryId;
  }

  /**
   * Entries posted in [fromMs, toMs), in pages of the configured size. The answer is an array
   * of the entries that is also async-iterable page by page: it reads as the one array a 0.1
   * ledger returned and as the pages the current contract asks for.
   */
  listWindow(fromMs: number, toMs: number): LedgerPages {
    const entries = this.#entries.filter((e) => e.postedAt >= fromMs && e.postedAt < toMs).map((e) => ({ ...e }));
    const size = this.#pageSize;
    const pages = Object.assign([...entries], {
      [Symbol.asyncIterator](): AsyncIterator<readonly LedgerEntry[]> {
        let at = 0;
        return {
          next: () => {
            const page = entries.slice(at, at + size);
            at += size;
            return Promise.resolve(page.length === 0 ? { done: true, value: undefined } : { done: false, value: page });
          },
        };
      },
    });
    return pages;
  }

  reverse(entryId: string, reversal: { reversalId: string; reason: string; at: number }): Promise<ReverseResult> {
    const index = this.#entries.findIndex((e) => e.entryId === entryId);
    const entry = this.#entries[index];
    if (entry === undefined) return Promise.resolve('not-found');
    if (entry.status !== LEDGER_STATUS.posted) return Promise.resolve('already-reversed');
    this.#entries[index] = { ...entry, status: LEDGER_STATUS.reversed, reversedAt: reversal.at, reversalId: reversal.reversalId, reversalReason: reversal.reason };
    const charge = this.#downstream.get(entry.chargeId);
    const own = charge !== undefined && this.#holds(entry, charge);
    const refunded = own && this.#downstream.refund(charge.chargeId, reversal.at);
    this.reversals.push({ entryId, ...(refunded ? { refunded: charge.chargeId } : {}) });
    return Promise.resolve('reversed');
  }

  /** Every entry of a key, posted or reversed. */
  entriesOf(route: string, key: string): readonly SimLedgerEntry[] {
    return this.#entries.filter((e) => e.route === route && e.idempotencyKey === key);
  }
}
