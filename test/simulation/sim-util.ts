/** Small helpers of the simulation: call watchers, traces, SQS records, Lambda contexts. */
import type { Context, SQSRecord } from 'aws-lambda';
import { lambdaContext } from '../../local/http-api-event.ts';
import type { SimReceivedMessage } from './simulated-sqs.ts';

/**
 * `target` with one async method watched: `before` sees each call's arguments, `after` its
 * result as well. Every other member passes through untouched.
 */
export function watchCalls<T extends object>(
  target: T,
  method: string,
  before?: (args: unknown[]) => void,
  after?: (args: unknown[], out: unknown) => void,
): T {
  return new Proxy(target, {
    get(object, prop, receiver) {
      const value: unknown = Reflect.get(object, prop, receiver);
      if (typeof value !== 'function') return value;
      const call = value as (...args: unknown[]) => Promise<unknown>;
      if (prop !== method) return call.bind(object);
      return async (...args: unknown[]) => {
        before?.(args);
        const out = await call.apply(object, args);
        after?.(args, out);
        return out;
      };
    },
  });
}

export function workKey(route: string, key: string): string {
  return `${route}\u0000${key}`;
}

export function contextOf(deadlineMs: number, now: () => number): Context {
  return { ...lambdaContext('retryproof-executor-simulation'), awsRequestId: 'simulation', getRemainingTimeInMillis: () => Math.max(0, deadlineMs - now()) };
}

/** `target`, each async method's answer or error traced (when tracing). */
export function traced<T extends object>(target: T, label: string, trace: ((line: string) => void) | undefined): T {
  if (trace === undefined) return target;
  return new Proxy(target, {
    get(object, prop, receiver) {
      const value: unknown = Reflect.get(object, prop, receiver);
      if (typeof value !== 'function') return value;
      const call = value as (...args: unknown[]) => unknown;
      return (...args: unknown[]) => {
        const out = call.apply(object, args);
        if (!(out instanceof Promise)) return out;
        const arg = args[0] as { key?: string } | string;
        const key = typeof arg === 'object' && arg.key !== undefined ? arg.key : String(args[1]);
        return out.then(
          (answer: unknown) => {
            trace(`  ${label}.${String(prop)} ${key} -> ${summaryOf(answer)}`);
            return answer;
          },
          (error: unknown) => {
            trace(`  ${label}.${String(prop)} ${key} threw ${String(error)}`);
            throw error;
          },
        );
      };
    },
  });
}

/** A port call's answer in a few words, for traces. */
export function summaryOf(out: unknown): string {
  if (out === undefined || typeof out !== 'object' || out === null) return String(out);
  const o = out as { kind?: string; status?: string; record?: { status?: string; attempts?: number } };
  if (o.kind !== undefined) return `${o.kind}${o.record === undefined ? '' : ` (${String(o.record.status)}, attempts ${String(o.record.attempts)})`}`;
  if (o.status !== undefined) return o.status;
  return JSON.stringify(out).slice(0, 80);
}

/** The key a work message is for, for traces. */
export function messageKey(body: string): string {
  try {
    const parsed = JSON.parse(body) as { key?: unknown; deadLetterId?: unknown };
    return `${String(parsed.key)}${parsed.deadLetterId === undefined ? '' : '(dead-letter copy)'}`;
  } catch {
    return '?';
  }
}

export function sqsRecordOf(message: SimReceivedMessage, arn: string): SQSRecord {
  return {
    messageId: message.messageId,
    receiptHandle: message.receiptHandle,
    body: message.body,
    attributes: {
      ApproximateReceiveCount: message.attributes.ApproximateReceiveCount,
      SentTimestamp: message.attributes.SentTimestamp,
      SenderId: message.attributes.SenderId,
      ApproximateFirstReceiveTimestamp: message.attributes.ApproximateFirstReceiveTimestamp,
    },
    messageAttributes: Object.fromEntries(
      Object.entries(message.messageAttributes).map(([name, v]) => [name, { dataType: v.dataType, ...(v.stringValue === undefined ? {} : { stringValue: v.stringValue }) }]),
    ),
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: arn,
    awsRegion: 'us-east-1',
  };
}


/** The item of `items` that `a` in [0, 1) picks. */
export const pick = <T>(items: readonly T[], a: number): T | undefined => items[Math.floor(a * items.length)];
