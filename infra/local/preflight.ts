import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

/**
 * What `npm start` checks before it starts anything, so that a clash is one line naming what to
 * change rather than a stack trace, a half-started stack, or a foreign service silently reused.
 */
export class LocalStackError extends Error {}

/**
 * Binds the port the way the service will, then lets it go. Something already listening there
 * (a DynamoDB Local left by another run, anything else) would otherwise either fail the start
 * with a raw EADDRINUSE or, worse, answer in place of the process we start.
 */
export async function assertPortFree(port: number, host: string, variable: string, service: string): Promise<void> {
  await new Promise<void>((done, fail) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) =>
      fail(
        error.code === 'EADDRINUSE' || error.code === 'EACCES'
          ? new LocalStackError(
              `port ${port} for ${service} is ${error.code === 'EADDRINUSE' ? 'already in use' : 'not open to this user'} on ${host}: set ${variable} to a free port`,
            )
          : error,
      ),
    );
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => done()));
  });
}

/**
 * `<LOCAL_DIR>/stack.pid`: written by `npm start` once it owns the folder, removed when it stops.
 * `npm run reset` refuses while it names a live process, and a second start on the same folder
 * refuses too; a file left by a stack that was killed (its pid no longer alive) is stale and ignored.
 */
const lockFile = (localDir: string) => join(localDir, 'stack.pid');

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, but another user's process.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** The pid of the local stack running on this folder, if one is. */
export function runningStackPid(localDir: string): number | undefined {
  let pid: number;
  try {
    pid = Number(readFileSync(lockFile(localDir), 'utf8').trim());
  } catch {
    return undefined;
  }
  return Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid) ? pid : undefined;
}

export function acquireStackLock(localDir: string): () => void {
  const pid = runningStackPid(localDir);
  if (pid !== undefined) throw new LocalStackError(`the local stack already runs on ${localDir} (pid ${pid}); stop it first, or set LOCAL_DIR to another folder`);
  writeFileSync(lockFile(localDir), `${process.pid}\n`);
  return () => rmSync(lockFile(localDir), { force: true });
}
