import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { DEMO_BUYER_EMAIL } from '#infra/local/seed.ts';

/**
 * A sample event of events/ made runnable: its placeholders filled from the demo store
 * (<LOCAL_DIR>/demo.json) or the environment (ACCESS_TOKEN, SESSION). What a static file cannot
 * hold because it is single-use or expires (a buyer token or a session without those two, a login
 * code, a handoff) is issued for the demo store's buyer, so every event runs as is.
 * The caller has configured the environment (TABLE_NAME, endpoints) before calling.
 */
export async function runnableEvent(eventText: string, localDir: string, env: NodeJS.ProcessEnv = process.env): Promise<APIGatewayProxyEventV2> {
  const demoFile = join(localDir, 'demo.json');
  const demo: Record<string, string | number | undefined> = existsSync(demoFile) ? JSON.parse(readFileSync(demoFile, 'utf8')) : {};
  const storeId = Number(demo.store_id);
  const buyer = async () => {
    const { findOrCreateCustomer } = await import('#lib/db/customer.ts');
    return findOrCreateCustomer(storeId, DEMO_BUYER_EMAIL);
  };
  const issue: Record<string, () => Promise<string | undefined>> = {
    access_token: async () => {
      const { issueBuyerAccessToken } = await import('#lib/db/credential.ts');
      return env.ACCESS_TOKEN ?? (storeId ? (await issueBuyerAccessToken(storeId, (await buyer()).id)).token : undefined);
    },
    session: async () => {
      const { issueSession } = await import('#lib/db/credential.ts');
      return env.SESSION ?? (storeId ? (await issueSession(storeId, (await buyer()).id)).sessionId : undefined);
    },
    login_code: async () => {
      const { issueLoginCode } = await import('#lib/db/login-code.ts');
      const { serverKeys } = await import('#lib/server-secret.ts');
      return storeId ? (await issueLoginCode(await serverKeys(), storeId, DEMO_BUYER_EMAIL)).code : undefined;
    },
    handoff: async () => {
      const { issueHandoffForCustomer } = await import('#lib/flows/handoff.ts');
      return storeId ? (await issueHandoffForCustomer(storeId, (await buyer()).id)).handoff : undefined;
    },
  };
  const values: Record<string, string | undefined> = {
    api_token: demo.api_token as string,
    identify_key: demo.identify_key as string,
    store_domain: demo.store_domain as string,
    order_internal_id: demo.order_internal_id as string,
  };
  for (const [, key] of eventText.matchAll(/\{\{(\w+)\}\}/g)) if (!(key! in values) && issue[key!]) values[key!] = await issue[key!]!();
  return JSON.parse(eventText.replace(/\{\{(\w+)\}\}/g, (match, key: string) => values[key] ?? match));
}
