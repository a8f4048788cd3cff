/**
 * The GitHub Action: reads the step's inputs (INPUT_* variables the runner sets) and runs `shieldgate-ci upload
 * --wait` with them. Outputs, job summary, annotations and the exit code are the command's own.
 */
import { main } from '../../client/src/cli';

/** An input as the runner passes it: INPUT_ + the name upper-cased, spaces as underscores (hyphens stay). */
function input(name: string): string {
  return (process.env[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`] ?? '').trim();
}

async function run(): Promise<number> {
  const args = ['upload', '--app', input('app-id'), '--file', input('file'), '--platform', input('platform'), '--version', input('version'), '--wait'];
  const optional: Array<[string, string]> = [
    ['commit', 'commit'],
    ['fail-under', 'fail-under'],
    ['fail-on-new', 'fail-on-new'],
    ['sarif', 'sarif'],
    ['manifest-path', 'manifest-path'],
    ['timeout', 'timeout'],
  ];
  for (const [name, flag] of optional) if (input(name)) args.push(`--${flag}`, input(name));
  const env: Record<string, string | undefined> = { ...process.env, SHIELDGATE_URL: input('server-url') || process.env.SHIELDGATE_URL };
  // An api-key input wins over the keyless exchange; an empty one leaves any SHIELDGATE_API_KEY of the job alone.
  if (input('api-key')) env.SHIELDGATE_API_KEY = input('api-key');
  return main(args, { env, stdout: process.stdout, stderr: process.stderr, tty: false });
}

run().then((code) => {
  process.exitCode = code;
});
