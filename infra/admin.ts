/**
 * `npm run admin -- <entity> <action> [--flag value ...]`, printing JSON.
 *
 *   store create --name NAME --domain DOMAIN   -> {store_id, domain, api_token}
 *   token create --store ID                    -> {store_id, api_token, credential_id}
 *   token revoke --token TOKEN [--store ID]    -> {revoked: true}  (the token names its store; --store is a guard that must match)
 *   key create --store ID --scope customers:identify -> {store_id, key, credential_id, scopes}
 *   key create --store ID --scope delivery --server ID -> {store_id, server_id, key, credential_id, scopes}
 *   key revoke --key KEY [--store ID]          -> {revoked: true}  (likewise)
 *   order index-clients --store ID             -> {store_id, orders, indexed}  (once, for orders written before the client_identifier filter)
 *
 * Without TABLE_NAME it talks to the local stack (`npm start`, DynamoDB Local on DYNAMODB_PORT
 * or 8000). With TABLE_NAME and AWS_REGION (and credentials) it talks to a deployed table.
 */
const env = process.env;
env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
if (!env.TABLE_NAME) {
  env.TABLE_NAME = 'store-api-local';
  env.DYNAMODB_ENDPOINT ||= `http://127.0.0.1:${env.DYNAMODB_PORT ?? 8000}`;
  env.AWS_ACCESS_KEY_ID ||= 'local';
  env.AWS_SECRET_ACCESS_KEY ||= 'local';
  env.AWS_REGION ||= 'us-east-1';
}

function parseArgs(argv: string[]): { command: string; flags: Record<string, string | undefined> } {
  const words: string[] = [];
  const flags: Record<string, string | undefined> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg.startsWith('--')) {
      const [name, inline] = arg.slice(2).split('=', 2);
      flags[name!] = inline ?? argv[++i];
    } else {
      words.push(arg);
    }
  }
  return { command: words.join(' '), flags };
}

const { adminCommands } = await import('#lib/admin/commands.ts');
const { HttpError } = await import('#lib/errors.ts');
const { command, flags } = parseArgs(process.argv.slice(2));
const run = adminCommands[command];
if (!run) {
  console.error(JSON.stringify({ error: `Unknown command "${command}"`, commands: Object.keys(adminCommands) }));
  process.exit(2);
}
try {
  console.log(JSON.stringify(await run(flags), null, 2));
} catch (error) {
  if (error instanceof HttpError) {
    console.error(JSON.stringify({ error: error.details.map((d) => d.message).join('; '), status: error.status }));
  } else {
    const unreachable = (error as { code?: string }).code === 'ECONNREFUSED' || /ECONNREFUSED/.test(String((error as Error).message));
    console.error(JSON.stringify({ error: unreachable ? `Cannot reach DynamoDB at ${env.DYNAMODB_ENDPOINT}: is the local stack running (npm start)?` : (error as Error).message }));
  }
  process.exit(1);
}
