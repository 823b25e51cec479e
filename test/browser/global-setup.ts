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
 * The browser journey runs against what `npm start` gives a store owner: the local stack with the
 * demo store seeded, and the owner backend example holding its identify key.
 */
export default async function setup(project: TestProject) {
  // The browser tests start the fake Mercado Pago on this port (test/support/fake-mercadopago.ts).
  const mercadopagoPort = await freePort();
  const stack = await startStackProcess({ LOCAL_SEED: '1', MERCADOPAGO_API_URL: `http://127.0.0.1:${mercadopagoPort}` });
  project.provide('mercadopagoPort', mercadopagoPort);
  if (!stack.ready.owner_backend_url) throw new Error('npm start with the demo store did not start the owner backend');
  project.provide('apiPort', stack.port);
  project.provide('localDir', stack.localDir);
  // For the admin command line a test runs against this stack (a second, empty store).
  project.provide('dynamodbEndpoint', stack.ready.dynamodb_endpoint!);
  project.provide('tableName', stack.ready.table!);
  project.provide('storeUrl', `http://demo.localhost:${stack.port}`);
  project.provide('ownerBackendUrl', stack.ready.owner_backend_url);
  return stack.stop;
}
