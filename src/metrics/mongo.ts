import type { CommandFailedEvent, CommandSucceededEvent, MongoClient } from 'mongodb';
import { metrics } from './registry';

const observed = new WeakSet<MongoClient>();
/** Command names are the driver's (find, insert, getMore, ...); anything else shares one label. */
const COMMAND_NAME = /^[A-Za-z]{1,40}$/;

/**
 * Times every database command by name and outcome from the driver's command monitoring (the client must be made
 * with `monitorCommands: true`). Only the command's name is read: never its filter, documents or reply.
 * Once per client, however many times it is handed over (tests share one client across many sets of dependencies).
 */
export function observeMongoCommands(client: MongoClient): void {
  if (observed.has(client)) return;
  observed.add(client);
  // The series of each (command, outcome), looked up once: the labels' values come from small fixed sets.
  const series = new Map<string, { observe(seconds: number): void }>();
  const record = (event: CommandSucceededEvent | CommandFailedEvent, outcome: 'ok' | 'failed') => {
    const command = COMMAND_NAME.test(event.commandName) ? event.commandName : 'other';
    const key = `${command}\n${outcome}`;
    let observer = series.get(key);
    if (!observer) series.set(key, (observer = metrics.dbCommandDuration.labels({ command, outcome })));
    observer.observe(event.duration / 1000);
  };
  client.on('commandSucceeded', (event) => record(event, 'ok'));
  client.on('commandFailed', (event) => record(event, 'failed'));
}
