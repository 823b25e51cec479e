import { createApiKey, createApiToken } from '#lib/db/credential.ts';
import { createStore } from '#lib/db/store.ts';
import { createTag } from '#lib/db/tag.ts';

export const DEMO_DOMAIN = 'demo.localhost';

/** The demo store of the local stack: a token, an identify key and a little data to list. */
export async function seedDemoStore() {
  const store = await createStore({ name: 'Demo Store', domain: DEMO_DOMAIN });
  const { api_token } = await createApiToken(store.id);
  const { key } = await createApiKey(store.id, ['customers:identify']);
  await createTag(store.id, { name: 'New', color: '#22c55e' });
  await createTag(store.id, { name: 'Best seller', color: '#f59e0b', apply_to_all_packages: false });
  return { store_id: store.id, domain: store.domain, api_token, identify_key: key };
}
