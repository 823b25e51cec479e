import { AsyncLocalStorage } from 'node:async_hooks';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * DynamoDB faults on demand, for one request of the local stack: the header
 * `x-local-dynamodb-fault: <fault>:<Operation>:<attempts>[,...]` (read only by infra/local/server.ts;
 * on AWS it means nothing) hits the given attempts of an operation within the request, counted
 * per operation and per attempt, so the SDK's own retries are attempts too:
 *
 * | fault         | what the function sees                                     | written? |
 * |---------------|------------------------------------------------------------|----------|
 * | `lose-answer` | the call reaches DynamoDB, then the connection is reset    | yes      |
 * | `fail`        | a 500 InternalServerError                                  | no       |
 * | `throttle`    | ProvisionedThroughputExceededException                     | no       |
 *
 * `<attempts>` is `n` or `n-m` (1-based). Example: `lose-answer:UpdateItem:1` loses the answer
 * of the request's first UpdateItem attempt; the SDK retries it (attempt 2) as it would on AWS.
 */
export interface Fault {
  kind: 'lose-answer' | 'fail' | 'throttle';
  operation: string;
  from: number;
  to: number;
}

interface FaultPlan {
  faults: Fault[];
  attempts: Map<string, number>;
}

export const localDynamoDbFaults = new AsyncLocalStorage<FaultPlan>();

/** The faults a header asks for; undefined when it asks for none or is malformed. */
export function parseFaults(header: string | undefined): Fault[] | undefined {
  if (!header) return undefined;
  const faults: Fault[] = [];
  for (const part of header.split(',')) {
    const match = /^\s*(lose-answer|fail|throttle):([A-Za-z]+):(\d+)(?:-(\d+))?\s*$/.exec(part);
    if (!match) return undefined;
    const from = Number(match[3]);
    faults.push({ kind: match[1] as Fault['kind'], operation: match[2]!, from, to: match[4] === undefined ? from : Number(match[4]) });
  }
  return faults;
}

export const withDynamoDbFaults = <T>(faults: Fault[] | undefined, work: () => Promise<T>): Promise<T> =>
  faults ? localDynamoDbFaults.run({ faults, attempts: new Map() }, work) : work();

const serviceError = (name: string, status: number, message: string) =>
  Object.assign(new Error(message), { name, $fault: status >= 500 ? 'server' : 'client', $metadata: { httpStatusCode: status, attempts: 1 } });

const injected = new WeakSet<DynamoDBDocumentClient>();

/** Installs the injector on a client once (each reload generation of lib/db/client.ts has its own). */
export function injectDynamoDbFaults(db: DynamoDBDocumentClient): void {
  if (injected.has(db)) return;
  injected.add(db);
  db.middlewareStack.add(
    (next, context) => async (args) => {
      const plan = localDynamoDbFaults.getStore();
      if (!plan) return next(args);
      const operation = (context.commandName ?? '').replace(/Command$/, '');
      const attempt = (plan.attempts.get(operation) ?? 0) + 1;
      plan.attempts.set(operation, attempt);
      const fault = plan.faults.find((entry) => entry.operation === operation && attempt >= entry.from && attempt <= entry.to);
      if (fault?.kind === 'fail') throw serviceError('InternalServerError', 500, 'Internal server error (injected)');
      if (fault?.kind === 'throttle') throw serviceError('ProvisionedThroughputExceededException', 400, 'Throughput exceeded (injected)');
      const output = await next(args);
      if (fault?.kind === 'lose-answer') throw Object.assign(new Error('socket hang up (injected: the call landed)'), { code: 'ECONNRESET', $metadata: {} });
      return output;
    },
    // Inside the SDK's retry loop (one run per attempt), inside the request's write tracking (lib/db/request-effects.ts).
    { step: 'deserialize', priority: 'high', name: 'localDynamoDbFaults' },
  );
}
