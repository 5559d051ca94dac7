/**
 * The storm's senders: each event is delivered the way a real, unlucky sender delivers
 * it. Concurrent copies of the first attempt, a retry ladder when the answer is lost or
 * not 2xx, and the probes that must be refused (a forged copy first, a stale one, and a
 * reused key with another payload after acceptance). Against several Regions, each event's
 * requests go to the Regions in turn, as a sender's retries land wherever its DNS or load
 * balancer sends them: request i of event e to Region (e + i) mod n, so the first copies of
 * successive events start in every Region and every copy after goes to the next one.
 */
import { randomBytes } from 'node:crypto';
import { newKey, sampleBody, signSample, webhookUrl } from '../../local/index.ts';
import type { SampleRoute } from '../../local/index.ts';
import type { EventPlan } from './storm-plan.ts';

export type RequestKind = 'genuine' | 'bad-signature' | 'stale-timestamp' | 'mismatched-payload';

/** What each kind must be answered with. */
export const EXPECTED_STATUS: Readonly<Record<Exclude<RequestKind, 'genuine'>, number>> = {
  'bad-signature': 401,
  'stale-timestamp': 401,
  'mismatched-payload': 422,
};

export interface RequestRecord {
  readonly event: number;
  /** The Region it was sent to, when the storm spans several. */
  readonly region?: string;
  readonly kind: RequestKind;
  readonly attempt: number;
  /** 0: no answer (network error or timeout). */
  readonly status: number;
  readonly replayed: boolean;
  readonly ms: number;
  readonly error?: string;
}

export interface EventOutcome {
  readonly index: number;
  readonly key: string;
  readonly plan: EventPlan;
  /** The receiver answered 2xx to a genuine copy at least once. */
  readonly accepted: boolean;
  /** The sender saw a 2xx (not lost) and stopped retrying. */
  readonly acknowledged: boolean;
  /** Genuine attempts made, the first one's copies counted once. */
  readonly attempts: number;
}

/** A Region of the receiver: its name and its webhook base URL. */
export interface SenderRegion {
  readonly name: string;
  readonly url: string;
}

export interface SenderOptions {
  /** The receiver's base URL, when it is one Region. */
  readonly url: string;
  /** Its Regions, when it is several: each event's requests go to them in turn. @default - `url` only */
  readonly regions?: readonly SenderRegion[];
  readonly route: SampleRoute;
  readonly secret: string;
  /** The ladder's waits, already scaled, in milliseconds. */
  readonly ladderMs: readonly number[];
  /** Events in flight at once. */
  readonly concurrency: number;
  /** The route's timestamp tolerance, to build a stale copy. @default 300 */
  readonly toleranceSeconds?: number;
  /** Called after each event ends, with the requests sent so far. */
  readonly onEventDone?: (done: number, requests: number) => void;
  /** Called once, when this many events have started (for the mid-run executor restart). */
  readonly midRun?: { readonly afterEvents: number; readonly action: () => Promise<void> };
  readonly requestTimeoutMs?: number;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A secret of the right shape that is not the route's: its signatures never verify. */
function forgedSecret(route: SampleRoute): string {
  const random = randomBytes(32).toString('base64');
  return route.signature.scheme === 'standard-webhooks' ? `whsec_${random}` : `forged-${random}`;
}

type Signed = { headers: Record<string, string>; body: string };
type Post = (event: number, kind: RequestKind, attempt: number, signed: Signed) => Promise<RequestRecord>;

/** Posts one request and records its answer (status 0 for none); each event's requests go to the Regions in turn. */
function requestPoster(options: SenderOptions, requests: RequestRecord[]): Post {
  const single = webhookUrl(options.url, options.route.name);
  const regions = (options.regions ?? []).map((r) => ({ name: r.name, url: webhookUrl(r.url, options.route.name) }));
  const timeoutMs = options.requestTimeoutMs ?? 10_000;
  /** The event's requests so far, by event: the next one goes to the next Region. */
  const sentOf = new Map<number, number>();
  return async (event, kind, attempt, signed) => {
    const seq = sentOf.get(event) ?? 0;
    sentOf.set(event, seq + 1);
    const region = regions.length === 0 ? undefined : regions[(event + seq) % regions.length];
    const url = region?.url ?? single;
    const where = region === undefined ? {} : { region: region.name };
    const started = performance.now();
    let record: RequestRecord;
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: signed.headers,
        body: signed.body,
        signal: AbortSignal.timeout(timeoutMs),
      });
      await response.arrayBuffer();
      record = {
        event,
        ...where,
        kind,
        attempt,
        status: response.status,
        replayed: response.headers.get('idempotent-replayed') === 'true',
        ms: performance.now() - started,
      };
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause;
      record = { event, ...where, kind, attempt, status: 0, replayed: false, ms: performance.now() - started, error: cause?.code ?? (err as Error).name };
    }
    requests.push(record);
    return record;
  };
}

/** One event as an unlucky sender delivers it: refused probes, the copies and the ladder, then a mismatched reuse. */
async function deliverEvent(plan: EventPlan, options: SenderOptions, post: Post): Promise<EventOutcome> {
  const tolerance = options.toleranceSeconds ?? 300;
  const key = newKey(options.route);
  const payload = { type: 'payout.requested', amount: plan.amount, currency: 'EUR', ...(plan.simulate === undefined ? {} : { simulate: plan.simulate }) };
  const body = sampleBody(options.route, key, payload);
  const now = (): number => Math.floor(Date.now() / 1000);
  // Refused copies first: verify-before-claim means neither may poison the key.
  if (plan.badSignature) await post(plan.index, 'bad-signature', 0, signSample(options.route, forgedSecret(options.route), key, body, now()));
  if (plan.stale) await post(plan.index, 'stale-timestamp', 0, signSample(options.route, options.secret, key, body, now() - tolerance - 120));
  let accepted = false;
  let acknowledged = false;
  let attempts = 0;
  for (let attempt = 0; attempt <= options.ladderMs.length && !acknowledged; attempt++) {
    if (attempt > 0) await sleep(options.ladderMs[attempt - 1] ?? 0);
    attempts++;
    // Each attempt is signed anew, with its own timestamp, as senders do; the body stays the same.
    const signed = signSample(options.route, options.secret, key, body, now());
    const copies = attempt === 0 ? plan.copies : 1;
    const answers = await Promise.all(Array.from({ length: copies }, () => post(plan.index, 'genuine', attempt, signed)));
    const ok = answers.some((a) => a.status >= 200 && a.status < 300);
    accepted ||= ok;
    acknowledged = ok && plan.lostAcks[attempt] !== true;
  }
  if (plan.mismatch && accepted) {
    const other = sampleBody(options.route, key, { ...payload, amount: plan.amount + 1 });
    await post(plan.index, 'mismatched-payload', 0, signSample(options.route, options.secret, key, other, now()));
  }
  return { index: plan.index, key, plan, accepted, acknowledged, attempts };
}

/** Sends every planned event, `concurrency` at a time, and starts the mid-run action once; returns the events in plan order. */
export async function runSenders(plans: readonly EventPlan[], options: SenderOptions): Promise<{ requests: RequestRecord[]; events: EventOutcome[] }> {
  const requests: RequestRecord[] = [];
  const events: EventOutcome[] = [];
  const post = requestPoster(options, requests);
  let next = 0;
  let done = 0;
  let midRunDone = false;
  const midRuns: Promise<void>[] = [];
  const worker = async (): Promise<void> => {
    for (;;) {
      const plan = plans[next];
      if (plan === undefined) return;
      next++;
      if (options.midRun !== undefined && !midRunDone && next > options.midRun.afterEvents) {
        midRunDone = true;
        midRuns.push(options.midRun.action());
      }
      events.push(await deliverEvent(plan, options, post));
      done++;
      options.onEventDone?.(done, requests.length);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, () => worker()));
  await Promise.all(midRuns);
  events.sort((a, b) => a.index - b.index);
  return { requests, events };
}
