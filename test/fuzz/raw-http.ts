/**
 * A raw HTTP/1.1 client over one TCP connection per request. fetch and node:http both
 * tidy a request before it leaves (they merge header names that differ only in case,
 * refuse odd methods, paths and header bytes), which would hide from a fuzzer exactly
 * what a real sender, or a broken one, can put on the wire.
 */
import { connect } from 'node:net';

/** A request exactly as it goes on the wire. */
export interface RawHttpRequest {
  readonly method: string;
  /** The request target as written on the request line: path and query, or anything else. */
  readonly target: string;
  /** Name and value pairs in order; names keep their case, values are written as latin1 bytes. */
  readonly headers: readonly (readonly [string, string])[];
  readonly body: Buffer;
  /** Send the body with `Transfer-Encoding: chunked` instead of a Content-Length. @default false */
  readonly chunked?: boolean;
}

/** What came back. Header names lowercase; repeated headers joined with ", ". */
export interface RawHttpAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

/** The connection ended, or timed out, before a whole answer arrived. */
export class NoAnswerError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'NoAnswerError';
  }
}

/** The bytes of `request`, with Host, Connection: close and the body framing added. */
export function encodeRequest(request: RawHttpRequest, host: string): Buffer {
  const lines: Buffer[] = [Buffer.from(`${request.method} ${request.target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n`, 'latin1')];
  for (const [name, value] of request.headers) lines.push(Buffer.from(`${name}: ${value}\r\n`, 'latin1'));
  if (request.chunked === true) {
    lines.push(Buffer.from('Transfer-Encoding: chunked\r\n\r\n', 'latin1'));
    // Chunks of 16 KiB, as a streaming sender would cut them.
    for (let at = 0; at < request.body.length; at += 16_384) {
      const chunk = request.body.subarray(at, at + 16_384);
      lines.push(Buffer.from(`${chunk.length.toString(16)}\r\n`, 'latin1'), chunk, Buffer.from('\r\n', 'latin1'));
    }
    lines.push(Buffer.from('0\r\n\r\n', 'latin1'));
  } else {
    lines.push(Buffer.from(`Content-Length: ${request.body.length}\r\n\r\n`, 'latin1'), request.body);
  }
  return Buffer.concat(lines);
}

function dechunk(data: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = data.indexOf('\r\n', at);
    if (eol === -1) return undefined;
    const size = Number.parseInt(data.subarray(at, eol).toString('latin1').split(';')[0] ?? '', 16);
    if (!Number.isFinite(size)) return undefined;
    if (size === 0) return Buffer.concat(parts);
    if (data.length < eol + 2 + size) return undefined;
    parts.push(data.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

/**
 * Parses a whole answer from everything the server sent before closing; undefined while
 * it is incomplete. `head` says the request was HEAD: the answer has no body then.
 */
export function parseAnswer(data: Buffer, head: boolean): RawHttpAnswer | undefined {
  const end = data.indexOf('\r\n\r\n');
  if (end === -1) return undefined;
  const [statusLine = '', ...lines] = data.subarray(0, end).toString('latin1').split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1];
  if (status === undefined) return undefined;
  // A 100 Continue (the sender asked with `Expect`) comes before the real answer.
  if (status.startsWith('1')) return parseAnswer(data.subarray(end + 4), head);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon === -1) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  const rest = data.subarray(end + 4);
  if (head || status === '204' || status === '304') return { status: Number(status), headers, body: Buffer.alloc(0) };
  if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
    const body = dechunk(rest);
    return body === undefined ? undefined : { status: Number(status), headers, body };
  }
  if (headers['content-length'] !== undefined) {
    const length = Number(headers['content-length']);
    return rest.length < length ? undefined : { status: Number(status), headers, body: rest.subarray(0, length) };
  }
  return { status: Number(status), headers, body: rest };
}

/**
 * Sends one request on a new connection to 127.0.0.1:port and reads the answer until the
 * server closes (the request says `Connection: close`). A server may answer early and close while the body is still being sent
 * (a 413): the answer counts as long as it arrived whole.
 * @throws NoAnswerError when no whole answer arrived within `timeoutMs`
 */
export function sendRaw(port: number, request: RawHttpRequest, timeoutMs = 30_000): Promise<RawHttpAnswer> {
  const head = request.method === 'HEAD';
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect({ host: '127.0.0.1', port });
    let failure: Error | undefined;
    const finish = (): void => {
      clearTimeout(timer);
      const answer = parseAnswer(Buffer.concat(chunks), head);
      if (answer !== undefined) resolve(answer);
      else reject(new NoAnswerError(`no whole answer to ${request.method} ${request.target.slice(0, 80)}`, { cause: failure }));
    };
    const timer = setTimeout(() => {
      failure = new Error(`timed out after ${timeoutMs} ms`);
      socket.destroy();
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    // A reset after a whole answer is the server refusing the rest of the body, not a failure.
    socket.on('error', (err) => {
      failure = err;
    });
    socket.on('close', finish);
    // No half-close after the request: Node's server drops a connection whose client ended
    // its side while the answer was still being made. `Connection: close` ends it instead.
    socket.write(encodeRequest(request, `127.0.0.1:${port}`));
  });
}
