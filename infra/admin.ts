import { parseArgs } from 'node:util';

/**
 * `npm run admin -- <entity> <action> [--flag value ...]`, printing JSON; `npm run admin -- --help`
 * lists the commands, `npm run admin -- <entity> <action> --help` tells one's flags. Flags are
 * parsed strictly (node:util parseArgs): an unknown or valueless flag is refused, nothing done.
 *
 *   store create --name NAME --domain DOMAIN   -> {store_id, domain, api_token}
 *   store list                                 -> {data: [{id, name, domain, created_at}]}
 *   token create --store ID                    -> {store_id, api_token, credential_id}
 *   token list --store ID                      -> {store_id, data: [{id, kind, scopes, server_id, created_at}]}  (never a secret)
 *   token revoke --token TOKEN [--store ID]    -> {revoked: true}  (the token names its store; --store is a guard that must match)
 *   key create --store ID --scope customers:identify -> {store_id, key, credential_id, scopes}
 *   key create --store ID --scope delivery --server ID -> {store_id, server_id, key, credential_id, scopes}
 *   key list --store ID                        -> {store_id, data: [...]}  (as token list)
 *   key rotate --key KEY [--store ID]          -> {store_id, key, credential_id, scopes, replaced}  (the old key revoked in the same transaction)
 *   key revoke --key KEY [--store ID]          -> {revoked: true}  (likewise)
 *   order index-clients --store ID             -> {store_id, orders, indexed}  (once, for orders written before the client_identifier filter)
 *   order recount --store ID                   -> {store_id, total, by_status}  (a repair: the order list totals counted again from the orders)
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

const { adminCommands } = await import('#lib/admin/commands.ts');
const { HttpError } = await import('#lib/errors.ts');

const argv = process.argv.slice(2);
// The command is the words before the first flag; the flags are the command's own.
const firstFlag = argv.findIndex((arg) => arg.startsWith('-'));
const words = firstFlag === -1 ? argv : argv.slice(0, firstFlag);
const rest = firstFlag === -1 ? [] : argv.slice(firstFlag);
const name = words.join(' ');
const commandNames = Object.keys(adminCommands).sort();
const fail = (message: string): never => {
  console.error(JSON.stringify({ error: message }));
  process.exit(2);
};

function overview(): string {
  const width = Math.max(...commandNames.map((command) => command.length));
  const lines = commandNames.map((command) => `  ${command.padEnd(width)}  ${adminCommands[command]!.summary}`);
  return ['Usage: npm run admin -- <command> [--flag value ...]   (JSON out; --help after a command for its flags)', '', 'Commands:', ...lines].join('\n');
}

if (name === '' || name === 'help') {
  const asked = name === 'help' || (rest.length === 1 && ['--help', '-h'].includes(rest[0]!));
  if (!asked && rest.length > 0) fail(`Flags go after a command: ${rest[0]} refused (npm run admin -- --help)`);
  // Asked for, the overview is the answer; with nothing at all, it is a usage error.
  (asked ? console.log : console.error)(overview());
  process.exit(asked ? 0 : 2);
}
const command = adminCommands[name] ?? fail(`Unknown command "${name}"; commands: ${commandNames.join(', ')} (npm run admin -- --help)`);

let values: Record<string, string | boolean | undefined>;
try {
  const options = Object.fromEntries(Object.keys(command.flags).map((flag) => [flag, { type: 'string' as const }]));
  ({ values } = parseArgs({ args: rest, options: { ...options, help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals: false }));
} catch (error) {
  fail(`${(error as Error).message.split('\n')[0]} (npm run admin -- ${name} --help)`);
}
if (values!.help) {
  const flagLines = Object.entries(command.flags).map(([flag, { help, required }]) => `  --${flag.padEnd(8)} ${help}${required ? ' (required)' : ''}`);
  console.log(
    [
      `Usage: npm run admin -- ${name}${Object.entries(command.flags)
        .map(([flag, { required }]) => (required ? ` --${flag} ${flag.toUpperCase()}` : ` [--${flag} ${flag.toUpperCase()}]`))
        .join('')}`,
      '',
      command.summary,
      '',
      ...(flagLines.length ? ['Flags:', ...flagLines, ''] : []),
      `Prints: ${command.prints}`,
    ].join('\n'),
  );
  process.exit(0);
}
const flags = Object.fromEntries(Object.entries(values!).filter(([flag]) => flag !== 'help')) as Record<string, string | undefined>;
try {
  console.log(JSON.stringify(await command.run(flags), null, 2));
} catch (error) {
  if (error instanceof HttpError) {
    console.error(JSON.stringify({ error: error.details.map((d) => d.message).join('; '), status: error.status }));
  } else {
    const unreachable = (error as { code?: string }).code === 'ECONNREFUSED' || /ECONNREFUSED/.test(String((error as Error).message));
    console.error(JSON.stringify({ error: unreachable ? `Cannot reach DynamoDB at ${env.DYNAMODB_ENDPOINT}: is the local stack running (npm start)?` : (error as Error).message }));
  }
  process.exit(1);
}
