/**
 * A server process of the test bed that can be stopped and started again on the same port, and that never
 * outlives the test process, even one killed by SIGKILL.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { waitForPort } from '../../src/embedded/ferretdb';

const STOP_GRACE_MS = 5_000;
const LOG_TAIL_LINES = 40;

// Runs the server under bash, holding the pipe of our stdin: when the test process is gone the pipe reaches end
// of file and the server is terminated. Servers such as redis-server have no "exit with my parent" option, and
// Node's 'exit' handlers do not run when a process is killed by a signal.
const LIFELINE = `
exec 3<&0
"$@" </dev/null &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null' TERM INT HUP
{ while read -r -u 3 _; do :; done; kill -TERM "$pid" 2>/dev/null; } &
watcher=$!
while :; do
  wait "$pid"; status=$?
  kill -0 "$pid" 2>/dev/null || break
done
kill "$watcher" 2>/dev/null
exit "$status"
`;

export interface ServerSpec {
  name: string;
  command: string;
  args: string[];
  port: number;
  /** Resolves once the server answers its own protocol; retried until the deadline. */
  ping(): Promise<void>;
  readyTimeoutMs?: number;
}

export class ServerProcess {
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  private readonly tail: string[] = [];

  constructor(private readonly spec: ServerSpec) {}

  async start(): Promise<void> {
    if (this.child) throw new Error(`${this.spec.name} is already running`);
    const child = spawn('bash', ['-c', LIFELINE, 'lifeline', this.spec.command, ...this.spec.args], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => this.keep(chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => this.keep(chunk));
    const spawnFailed = new Promise<never>((_, reject) => child.once('error', reject));
    const died = this.exited.then(() => {
      throw new Error(`${this.spec.name} exited while starting:\n${this.tail.join('\n')}`);
    });
    try {
      await Promise.race([this.waitReady(), spawnFailed, died]);
    } catch (error) {
      await this.stop();
      throw error;
    }
  }

  /** Stops the server and waits for its exit; a second call does nothing. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = null;
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const force = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    await this.exited;
    clearTimeout(force);
    // The pipes close only when every holder is gone; a stopped server leaves nothing for Jest to wait on.
    for (const stream of [child.stdin, child.stdout, child.stderr]) stream?.destroy();
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  private async waitReady(): Promise<void> {
    const timeoutMs = this.spec.readyTimeoutMs ?? 30_000;
    const deadline = Date.now() + timeoutMs;
    await waitForPort(this.spec.port, timeoutMs);
    for (;;) {
      try {
        await this.spec.ping();
        return;
      } catch (error) {
        if (Date.now() > deadline) throw new Error(`${this.spec.name} did not answer a ping: ${String(error)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  private keep(chunk: string): void {
    this.tail.push(...chunk.split('\n').filter((line) => line.length > 0));
    this.tail.splice(0, Math.max(0, this.tail.length - LOG_TAIL_LINES));
  }
}
