/**
 * Upload progress: a bar redrawn in place on a terminal (percent, MB/s, time left), a plain line every 10 % in a CI
 * log (where carriage returns pile up into one unreadable line).
 */
export interface Progress {
  start(): void;
  advance(bytes: number): void;
  done(): void;
}

const MB = 1024 * 1024;

function clock(seconds: number): string {
  if (!Number.isFinite(seconds)) return '--:--';
  const s = Math.max(0, Math.round(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

export function createProgress(total: number, out: NodeJS.WriteStream | NodeJS.WritableStream, tty: boolean): Progress {
  let sent = 0;
  let startedAt = 0;
  let lastDraw = 0;
  let lastDecile = -1;
  const line = () => {
    const elapsed = (Date.now() - startedAt) / 1000;
    const rate = elapsed > 0 ? sent / elapsed : 0;
    const percent = total > 0 ? Math.floor((sent / total) * 100) : 100;
    const left = rate > 0 ? (total - sent) / rate : Infinity;
    return { percent, text: `${percent}% ${(sent / MB).toFixed(1)}/${(total / MB).toFixed(1)} MB ${(rate / MB).toFixed(1)} MB/s ${clock(left)} left` };
  };
  return {
    start() {
      sent = 0;
      startedAt = Date.now();
      lastDecile = -1;
    },
    // Called per chunk: only arithmetic unless a line is due (every 100 ms on a terminal, every 10 % in a log).
    advance(bytes) {
      sent += bytes;
      if (tty) {
        const now = Date.now();
        if (now - lastDraw < 100 && sent < total) return;
        lastDraw = now;
        const { percent, text } = line();
        const filled = Math.round(percent / 5);
        out.write(`\r[${'#'.repeat(filled)}${' '.repeat(20 - filled)}] ${text}\x1b[K`);
        return;
      }
      const decile = total > 0 ? Math.floor((sent / total) * 10) : 10;
      if (decile > lastDecile) {
        lastDecile = decile;
        out.write(`upload ${line().text}\n`);
      }
    },
    done() {
      if (tty) out.write('\n');
    },
  };
}
