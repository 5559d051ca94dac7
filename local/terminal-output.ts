/**
 * What the local stack prints, in place of CloudWatch Logs and the alarm topic: one line
 * per delivery (a 401's with the reason the sender is never told), one per execution
 * attempt, and the circuit breaker's notices (read from the same log line as deployed,
 * where the RoutePaused alarm tells the topic). The handlers keep their real logging
 * calls; these loggers only print differently.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { ResolvedRoute } from '../lambdas/config/resolve-config.ts';
import type { PreparedRoute } from '../lambdas/ingest/prepared-route.ts';
import { SERVICE } from '../lambdas/observability/metric-catalogue.ts';
import { LineLogger } from './line-logger.ts';
import { deliveryIdOfAnswer, deliveryLine, executionLine, unauthorizedDetail } from './log-lines.ts';

/** Where lines go: normal output, and problems. Each line without its newline. */
export interface Terminal {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
}

export interface DeliveryLines {
  /** The ingest's logger: prints its errors, and keeps a refusal's reason for that delivery's line. */
  readonly ingestLogger: LineLogger;
  /** Prints a delivery's line once the gateway has answered it. */
  readonly onAnswer: (event: APIGatewayProxyEventV2, answer: APIGatewayProxyStructuredResultV2, ms: number) => void;
}

/** The `<route>/<key>` of a refused delivery, read from its headers only (never the body), when its route keys on headers. */
function refusedId(event: APIGatewayProxyEventV2, prepared: PreparedRoute | undefined): string | undefined {
  const route = event.pathParameters?.route ?? '';
  if (prepared === undefined) return undefined;
  const noBody = (): never => {
    throw new Error('no body');
  };
  try {
    return `${route}/${prepared.keySource({ headers: event.headers, json: noBody, fingerprint: noBody })}`;
  } catch {
    return undefined;
  }
}

function problemTitle(answer: APIGatewayProxyStructuredResultV2): string | undefined {
  if ((answer.statusCode ?? 0) < 400) return undefined;
  try {
    return (JSON.parse(answer.body ?? '{}') as { title?: string }).title;
  } catch {
    return undefined;
  }
}

/**
 * One line per delivery. The ingest logs a refusal's reason under the invocation's request
 * id, which the local gateway makes the event's own, so the line can carry it.
 */
export function deliveryLines(routes: readonly ResolvedRoute[], prepared: ReadonlyMap<string, PreparedRoute>, terminal: Terminal): DeliveryLines {
  const refusals = new Map<string, string>();
  const ingestLogger = new LineLogger(
    SERVICE.ingest,
    (entry) => {
      if (entry.message === 'delivery refused' && typeof entry.reason === 'string' && typeof entry.function_request_id === 'string') {
        refusals.set(entry.function_request_id, entry.reason);
      } else if (entry.message === 'circuit breaker tripped' && typeof entry.notice === 'object' && entry.notice !== null) {
        const { subject, ...notice } = entry.notice as { subject?: unknown };
        terminal.out(`notice: ${String(subject)} ${JSON.stringify(notice)}`);
      } else if (entry.level === 'ERROR') {
        terminal.err(`ingest ${entry.level}: ${String(entry.message)} ${JSON.stringify(entry.error ?? '')}`);
      }
    },
    'WARN',
  );
  const onAnswer = (event: APIGatewayProxyEventV2, answer: APIGatewayProxyStructuredResultV2, ms: number): void => {
    const route = event.pathParameters?.route ?? '';
    const { requestId } = event.requestContext;
    const refusal = refusals.get(requestId);
    refusals.delete(requestId);
    const title = problemTitle(answer);
    terminal.out(
      deliveryLine({
        route,
        id: deliveryIdOfAnswer(answer.body) ?? refusedId(event, prepared.get(route)),
        status: answer.statusCode ?? 0,
        replayed: answer.headers?.['idempotent-replayed'] === 'true',
        ms,
        ...(title === undefined ? {} : { title }),
        ...(refusal === undefined ? {} : { detail: unauthorizedDetail(refusal, routes.find((r) => r.name === route)?.signature) }),
      }),
    );
  };
  return { ingestLogger, onAnswer };
}

/** The executor's logger: one line per execution attempt, and its errors. */
export function executorLogger(terminal: Terminal): LineLogger {
  return new LineLogger(SERVICE.executor, (entry) => {
    const line = executionLine(entry);
    if (line !== undefined) terminal.out(line);
    else if (entry.level === 'ERROR') terminal.err(`executor error: ${String(entry.message)}`);
  });
}

/** A line that starts with the clock of log-lines.ts: `12:00:01.234 `. */
const CLOCKED = /^(\d\d:\d\d:\d\d\.\d{3}) /;

/**
 * The terminal of one Region of several: its name after a line's clock (`12:00:01.234 local-2 in
 * demo/msg_1 202 accepted`), or in brackets before a line without one, so a delivery, an
 * execution or a reconciliation says which Region's it was.
 */
export function regionTerminal(terminal: Terminal, region: string): Terminal {
  const named = (line: string): string => (CLOCKED.test(line) ? line.replace(CLOCKED, `$1 ${region} `) : `[${region}] ${line}`);
  return {
    out: (line) => {
      terminal.out(named(line));
    },
    err: (line) => {
      terminal.err(named(line));
    },
  };
}
