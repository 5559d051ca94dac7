/**
 * The local stack's gateway over its life: the port is taken first, so a busy one fails in
 * milliseconds, before any JVM starts; deliveries get 503 (the sender retries) and admin
 * calls 404 until the functions are wired; a close lets busy connections answer.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { createGateway, listen } from './http-gateway.ts';
import type { AdminHandler, GatewayOptions } from './http-gateway.ts';

/** Which Region of several a gateway serves, for the message of a taken port. */
export interface GatewayRegion {
  readonly name: string;
  /** The first Region's port (PORT). */
  readonly firstPort: number;
  /** How many Regions, on the ports from `firstPort` up. */
  readonly count: number;
}

/** The HTTP port is taken. */
export class PortInUseError extends Error {
  readonly port: number;
  constructor(port: number, region?: GatewayRegion) {
    super(
      region === undefined
        ? `port ${port} is already in use: stop what listens there, or start with another PORT (for example PORT=${port + 1} npm start)`
        : `port ${port} (region ${region.name}) is already in use: stop what listens there, or start with another PORT; ` +
            `the ${region.count} regions take the ports from PORT up (for example PORT=${region.firstPort + region.count} for ` +
            `${region.firstPort + region.count} to ${region.firstPort + 2 * region.count - 1})`,
    );
    this.name = 'PortInUseError';
    this.port = port;
  }
}

/** What the gateway serves once the stack is ready. */
export interface GatewayTargets {
  /** The ingest, as API Gateway invokes it. */
  readonly invoke: (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;
  /** The local admin calls, by `METHOD /path`. */
  readonly admin: ReadonlyMap<string, AdminHandler>;
}

export interface StackGateway {
  readonly url: string;
  /** Serves deliveries and admin calls from now on. */
  serve(targets: GatewayTargets): void;
  /** Answers 503 again at once; resolves once the server has closed. */
  close(): Promise<void>;
}

/** How long a busy connection may still take to answer when the gateway closes. */
const CLOSE_GRACE_MS = 5_000;

/**
 * Listens on 127.0.0.1:port.
 * @param region the Region it serves, when the stack runs several (named in a taken port's message)
 * @throws PortInUseError
 */
export async function openStackGateway(port: number, hooks: Pick<GatewayOptions, 'onAnswer' | 'onError'>, region?: GatewayRegion): Promise<StackGateway> {
  let targets: GatewayTargets | undefined;
  const admin = new Map<string, AdminHandler>();
  const server = createGateway({
    ...hooks,
    invoke: (event) => (targets === undefined ? Promise.reject(new Error('the ingest handler is not wired')) : targets.invoke(event)),
    admin,
    isReady: () => targets !== undefined,
  });
  try {
    await listen(server, port);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new PortInUseError(port, region);
    throw error;
  }
  return {
    url: `http://127.0.0.1:${port}`,
    serve: (served) => {
      targets = served;
      for (const [call, handler] of served.admin) admin.set(call, handler);
    },
    close: () =>
      new Promise((resolve) => {
        targets = undefined;
        admin.clear();
        // Idle keep-alive connections close now; busy ones get a few seconds to answer.
        const force = setTimeout(() => {
          server.closeAllConnections();
        }, CLOSE_GRACE_MS);
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}
