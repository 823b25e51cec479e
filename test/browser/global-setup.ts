import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { TestProject } from 'vitest/node';
import { startStackProcess } from '../integration/global-setup.ts';
import { freePort } from '../support/ports.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    storeUrl: string;
    ownerBackendUrl: string;
  }
}

/**
 * The browser journey runs against what `npm start` + `npm run owner-backend` give a store owner:
 * the local stack with the demo store seeded, and the owner backend holding its identify key.
 */
export default async function setup(project: TestProject) {
  const ownerPort = await freePort();
  const ownerBackendUrl = `http://127.0.0.1:${ownerPort}`;
  const stack = await startStackProcess({ LOCAL_SEED: '1', OWNER_BACKEND_URL: ownerBackendUrl });
  const storeUrl = `http://demo.localhost:${stack.port}`;
  // Started after the stack: it reads the identify key from the demo.json the seed just wrote.
  const owner = spawn(process.execPath, ['--import', 'tsx', 'examples/owner-backend/server.ts'], {
    env: { ...process.env, LOCAL_DIR: stack.localDir, OWNER_PORT: String(ownerPort), STORE_ORIGIN: storeUrl },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [line] = (await once(owner.stdout!, 'data')) as [Buffer];
  if (!line.toString().startsWith('{"ready"')) throw new Error(`owner backend did not start: ${line.toString()}`);
  owner.stdout!.resume();

  project.provide('apiPort', stack.port);
  project.provide('localDir', stack.localDir);
  project.provide('storeUrl', storeUrl);
  project.provide('ownerBackendUrl', ownerBackendUrl);
  return async () => {
    if (owner.exitCode === null) {
      owner.kill('SIGTERM');
      await once(owner, 'exit');
    }
    await stack.stop();
  };
}
