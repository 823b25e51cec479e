import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A fault-injecting HTTP proxy in front of DynamoDB (issue 28): each call, with probability
 * `rate` split evenly over the kinds, is throttled (ProvisionedThroughputExceeded or
 * ThrottlingException), answered 500, dropped before it reaches DynamoDB, dropped after DynamoDB
 * answered (the write done, the answer lost), or delayed 0.2-1.5 s. Decisions come from a seeded
 * generator, so a seed replays the same sequence of decisions (the interleaving of concurrent
 * calls still varies from run to run).
 */
export const FAULT_KINDS = ['throughput', 'throttling', 'internal', 'drop-before', 'drop-after', 'latency'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** mulberry32: a small seeded generator, enough to pick faults. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface ChaosProxy {
  port: number;
  /** Faults per call from now on (0: a plain proxy). */
  setRate(rate: number): void;
  counts: Record<FaultKind | 'calls', number>;
  close(): Promise<void>;
}

const dynamoError = (type: string, message: string) => JSON.stringify({ __type: type, message });

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((done, fail) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => done(Buffer.concat(chunks)));
    req.on('error', fail);
  });
}

export async function startChaosProxy(target: { host: string; port: number }, seed: number): Promise<ChaosProxy> {
  const random = seededRandom(seed);
  let rate = 0;
  const counts = Object.fromEntries([...FAULT_KINDS, 'calls'].map((kind) => [kind, 0])) as ChaosProxy['counts'];

  const forward = (req: IncomingMessage, body: Buffer) =>
    new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>((done, fail) => {
      const upstream = request({ host: target.host, port: target.port, method: req.method, path: req.url, headers: req.headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => done({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', fail);
      });
      upstream.on('error', fail);
      upstream.end(body);
    });

  const server: Server = createServer(async (req, res) => {
    counts.calls += 1;
    const body = await readBody(req);
    const fault = random() < rate ? FAULT_KINDS[Math.floor(random() * FAULT_KINDS.length)]! : undefined;
    if (fault) counts[fault] += 1;
    const refuse = (status: number, payload: string) => {
      res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0', 'content-length': Buffer.byteLength(payload) });
      res.end(payload);
    };
    try {
      switch (fault) {
        case 'throughput':
          return refuse(
            400,
            dynamoError(
              'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException',
              'The level of configured provisioned throughput for the table was exceeded (chaos)',
            ),
          );
        case 'throttling':
          return refuse(400, dynamoError('com.amazon.coral.availability#ThrottlingException', 'Rate of requests exceeds the allowed throughput (chaos)'));
        case 'internal':
          return refuse(500, dynamoError('com.amazon.coral.service#InternalServerError', 'Internal server error (chaos)'));
        case 'drop-before':
          return req.socket.destroy();
        case 'latency':
          await new Promise((resume) => setTimeout(resume, 200 + random() * 1300));
          break;
      }
      const answer = await forward(req, body);
      // The call is done in DynamoDB; the caller never hears of it.
      if (fault === 'drop-after') return req.socket.destroy();
      res.writeHead(answer.status, answer.headers);
      res.end(answer.body);
    } catch {
      req.socket.destroy();
    }
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return {
    port: (server.address() as AddressInfo).port,
    setRate: (next) => {
      rate = next;
    },
    counts,
    close: () =>
      new Promise((closed) => {
        server.closeAllConnections();
        server.close(() => closed());
      }),
  };
}
