import { DeliveryAgent } from './agent.ts';
import { StoreApi } from './api.ts';
import { GameConsole } from './game.ts';
import { fileJournal } from './journal.ts';
import { parseOptions, USAGE, UsageError, type AgentConfig } from './options.ts';

/**
 * The delivery agent's command line (extensions section 14): `npm run build:agent` bundles this
 * file into dist/agent.mjs; `npm run agent -- ...` runs it from source.
 */
declare const AGENT_VERSION: string | undefined;
export const VERSION = typeof AGENT_VERSION === 'string' ? AGENT_VERSION : 'source';

function configure(): AgentConfig {
  try {
    const config = parseOptions(process.argv.slice(2), process.env);
    if (config === 'help') {
      console.log(USAGE);
      process.exit(0);
    }
    // A state file that cannot be read or written would fail only once results depend on it.
    if (config.stateFile) {
      const journal = fileJournal(config.stateFile);
      try {
        journal.save(journal.load());
      } catch (error) {
        throw new UsageError(`--state-file ${config.stateFile}: ${(error as Error).message}`);
      }
    }
    return config;
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`delivery agent: ${error.message}`);
    process.exit(2);
  }
}

const config = configure();
// Nothing this process starts needs them; keep them out of any child's environment.
delete process.env.STORE_API_KEY;
delete process.env.RCON_PASSWORD;

const game = new GameConsole({ ...config.rcon, password: config.rconPassword });
const agent = new DeliveryAgent({
  api: new StoreApi(config.api, config.key, `store-api-delivery-agent/${VERSION}`),
  game,
  onlineCommand: config.onlineCommand,
  onlineParser: config.onlineParser,
  intervalMs: config.intervalSeconds * 1000,
  ...(config.stateFile ? { journal: fileJournal(config.stateFile) } : {}),
});

console.log(
  `store-api delivery agent ${VERSION}: game server ${game.address} (RCON), store API ${config.api}, ` + (config.once ? 'one cycle' : `claiming every ${config.intervalSeconds} s`),
);

let signals = 0;
const onSignal = (signal: NodeJS.Signals) => {
  signals++;
  if (signals === 1) {
    console.log(`${signal}: finishing the acks of what ran, then stopping (send it again to stop at once)`);
    agent.stop();
  } else {
    agent.forceStop();
  }
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

process.exitCode = config.once ? await agent.once() : await agent.run();
