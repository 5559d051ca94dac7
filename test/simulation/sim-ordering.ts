/**
 * The simulation's checks of ordering per entity (issue 24): a route ordered by the body's
 * `customer`, whose keys share a few customers, so that lines form, heads retry, fail, park and
 * are redriven while later work of the same customer waits.
 *
 * The invariants, per entity: every run of the record at an earlier place ends before any run of
 * the record at a later place starts (so no two runs of one entity overlap, and they run in the
 * accepted order); and a record keeps its place for as long as its budget lasts (the line never
 * passes work that is still retrying: only a FAILED head is passed, by a person's skip or by its
 * place's expiry, and only a redrive, with a new budget, runs it again at the end of the line).
 * Places are noted as the protocol's calls return them (store/dynamodb-entity-order.ts).
 */
import type { EntityOrder, LineRef } from '../../lambdas/ports/entity-order.ts';

/** One run of an action, as the simulation numbers its calls. */
export interface OrderedRun {
  readonly attempt: number;
  /** Where the record's turn came for this run (ObservedPlaces.current). */
  readonly place?: ObservedPlace;
  /** The budget it ran in (the record's generation and redrives): a redrive starts a new one. */
  readonly budget: string;
  readonly firstCallSeq?: number;
  readonly lastCallSeq?: number;
}

export interface OrderedKey {
  readonly route: string;
  readonly key: string;
  /** The entity's plain value (the body's customer). */
  readonly entity: string;
  readonly runs: readonly OrderedRun[];
}

/** How many customers the ordered route's keys share: few, so every line has several records. */
export const SIM_CUSTOMERS = 2;

/** The customer of an order: a stable pick among SIM_CUSTOMERS. */
export function customerOf(order: string): string {
  let h = 0;
  for (const ch of order) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return `cus_${h % SIM_CUSTOMERS}`;
}

export interface LineStats {
  /** Lines with two records or more that both ran. */
  linesChecked: number;
  /** Pairs of records of one entity that both ran, checked for order. */
  orderedPairs: number;
}

/** Where a record's turn came: its place, in the generation of its line that gave it. */
export interface ObservedPlace {
  /**
   * A line whose every item expired starts again at place 1: each restart is a new generation,
   * and every place of a later generation comes after every place of an earlier one.
   */
  readonly generation: number;
  readonly place: number;
}

/** The places records were given, as the protocol's calls returned them, by route and key. */
export class ObservedPlaces {
  readonly #lines = new Map<string, { generation: number; highest: number; holders: Map<number, string> }>();
  readonly #current = new Map<string, ObservedPlace>();

  /** The place of the record's last turn: where a run that starts now runs. */
  current(route: string, key: string): ObservedPlace | undefined {
    return this.#current.get(`${route}\u0000${key}`);
  }

  /**
   * Notes that the record holds `place` in its line. A place at or below the highest given, held
   * by another record, means the line started again (every item of it expired): a new generation.
   */
  #note(ref: LineRef, place: number): ObservedPlace {
    const id = `${ref.route}\u0000${ref.entity}`;
    const holder = `${ref.key}\u0000${ref.receivedAt}`;
    let line = this.#lines.get(id);
    if (line === undefined) {
      line = { generation: 0, highest: 0, holders: new Map() };
      this.#lines.set(id, line);
    }
    const known = line.holders.get(place);
    if (place <= line.highest && known !== undefined && known !== holder) {
      line.generation++;
      line.highest = 0;
      line.holders.clear();
    }
    line.holders.set(place, holder);
    line.highest = Math.max(line.highest, place);
    return { generation: line.generation, place };
  }

  /** The lines as the executor, the ingest and the reconciler call them, noting every place a call returns. */
  observe(order: EntityOrder, onMark?: () => void): EntityOrder {
    return {
      place: async (ref, ...rest) => {
        const place = await order.place(ref, ...rest);
        this.#note(ref, place);
        return place;
      },
      placeIfAbsent: async (ref, ...rest) => {
        const place = await order.placeIfAbsent(ref, ...rest);
        this.#note(ref, place);
        return place;
      },
      turn: async (ref, ...rest) => {
        const turn = await order.turn(ref, ...rest);
        if (turn.kind === 'none') return turn;
        const observed = this.#note(ref, turn.place);
        if (turn.kind === 'turn') this.#current.set(`${ref.route}\u0000${ref.key}`, observed);
        return turn;
      },
      markWaiting: (...a) => {
        onMark?.();
        return order.markWaiting(...a);
      },
      keep: (...a) => order.keep(...a),
      advance: (...a) => order.advance(...a),
      skip: (...a) => order.skip(...a),
      view: (...a) => order.view(...a),
    };
  }
}

/**
 * Checks the order of the runs of each entity's records, by the place at which each run's turn
 * came (noted by ObservedPlaces as the protocol's calls returned it).
 */
export function checkLines(keys: readonly OrderedKey[], violations: string[], stats: LineStats): void {
  const byLine = new Map<string, OrderedKey[]>();
  for (const k of keys) {
    const line = `${k.route}\u0000${k.entity}`;
    byLine.set(line, [...(byLine.get(line) ?? []), k]);
  }
  for (const members of byLine.values()) {
    // A record's stay at one place, and its runs there: a record passed (its place gone) and
    // redriven later is placed again at the end of its line, and runs there, after the others.
    const stays = new Map<string, { k: OrderedKey; at: ObservedPlace; starts: number; ends: number }>();
    const placeOfBudget = new Map<string, ObservedPlace>();
    for (const k of members) {
      for (const r of k.runs) {
        if (r.firstCallSeq === undefined || r.lastCallSeq === undefined) continue;
        if (r.place === undefined) {
          violations.push(`${k.key}: run ${r.attempt} on an ordered route (${k.entity}) started with no turn in its line`);
          continue;
        }
        const id = `${k.key}\u0000${r.place.generation}\u0000${r.place.place}`;
        const earlier = placeOfBudget.get(`${k.key}\u0000${r.budget}`);
        if (earlier === undefined) placeOfBudget.set(`${k.key}\u0000${r.budget}`, r.place);
        else if (earlier.generation !== r.place.generation || earlier.place !== r.place.place) {
          violations.push(`${k.entity} on ${k.route}: ${k.key} ran at ${placeText(earlier)} and again at ${placeText(r.place)} in one budget (run ${r.attempt}): the line passed it while it was still retrying`);
        }
        const stay = stays.get(id) ?? { k, at: r.place, starts: r.firstCallSeq, ends: r.lastCallSeq };
        stays.set(id, { ...stay, starts: Math.min(stay.starts, r.firstCallSeq), ends: Math.max(stay.ends, r.lastCallSeq) });
      }
    }
    const ordered = [...stays.values()].sort((a, b) => a.at.generation - b.at.generation || a.at.place - b.at.place);
    if (new Set(ordered.map((s) => s.k.key)).size > 1) stats.linesChecked++;
    for (let i = 0; i < ordered.length; i++) {
      for (let j = i + 1; j < ordered.length; j++) {
        const earlier = ordered[i] as (typeof ordered)[number];
        const later = ordered[j] as (typeof ordered)[number];
        if (earlier.k.key === later.k.key) continue;
        stats.orderedPairs++;
        // Every run at the earlier place, retries included, ended before any at the later began:
        // never beside it, never while it was retrying, never ahead of it.
        if (later.starts < earlier.ends) {
          violations.push(
            `${earlier.k.entity} on ${earlier.k.route}: ${later.k.key} (${placeText(later.at)}) ran ` +
              `${later.ends < earlier.starts ? 'before' : 'beside, or between the runs of,'} ${earlier.k.key} (${placeText(earlier.at)})`,
          );
        }
      }
    }
  }
}

function placeText(at: ObservedPlace): string {
  return at.generation === 0 ? `place ${at.place}` : `place ${at.place} of the line's start number ${at.generation + 1}`;
}

/** A record as the acceptance-order check sees it. */
export interface AcceptedKey extends OrderedKey {
  /** The event number of its first 2xx answer (the simulation's `arrivals` count). */
  readonly answeredSeq?: number;
  /** The event number of its first delivery's arrival. */
  readonly firstArrivalSeq?: number;
  /** Its record went FAILED at some point: a person may have skipped it, or redriven it to the end of its line. */
  readonly everFailed: boolean;
  /** Its creating delivery was answered with no place taken: it is placed by its first worker, later. */
  readonly placeFailed?: boolean;
}

/**
 * The guarantee in acceptance terms (docs/ordering.md): a record answered 2xx before another of
 * its entity first arrived runs first, unless a person passed it (it went FAILED), or its place
 * could not be taken at ingest. It holds across pauses of any length (issue 43, defect 2): a run
 * of the later record that starts before the earlier record's first run is a lost place.
 */
export function checkAcceptedOrder(keys: readonly AcceptedKey[], violations: string[]): void {
  const firstStart = (k: AcceptedKey): number | undefined => {
    const generation = k.runs[0]?.budget.split('/')[0];
    const starts = k.runs.filter((r) => r.budget.split('/')[0] === generation && r.firstCallSeq !== undefined).map((r) => r.firstCallSeq as number);
    return starts.length === 0 ? undefined : Math.min(...starts);
  };
  const byLine = new Map<string, AcceptedKey[]>();
  for (const k of keys) byLine.set(`${k.route}\u0000${k.entity}`, [...(byLine.get(`${k.route}\u0000${k.entity}`) ?? []), k]);
  for (const members of byLine.values()) {
    for (const earlier of members) {
      if (earlier.answeredSeq === undefined || earlier.everFailed || earlier.placeFailed === true) continue;
      const earlierStart = firstStart(earlier);
      for (const later of members) {
        if (later === earlier || later.firstArrivalSeq === undefined || later.firstArrivalSeq < earlier.answeredSeq) continue;
        const laterStart = firstStart(later);
        if (laterStart === undefined || (earlierStart !== undefined && earlierStart < laterStart)) continue;
        violations.push(
          `${earlier.entity} on ${earlier.route}: ${later.key} ran before ${earlier.key}, which was answered 2xx before ${later.key} first arrived` +
            `${earlierStart === undefined ? ' and never ran' : ''}: the line lost its accepted order`,
        );
      }
    }
  }
}
