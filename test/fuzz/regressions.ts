// Inputs the fuzzer found that made a parser crash, hang or blow up, kept so the unit tests replay them.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const REGRESSIONS_DIR = path.join(__dirname, 'regressions');

export type Regression = { target: string; file: string; symptom: string };

/** Saves an input as <target>/<kind>-<hash>.bin with its symptom beside it (.txt); returns the .bin path. */
export function saveRegression(target: string, kind: string, input: Buffer, symptom: string): string {
  const dir = path.join(REGRESSIONS_DIR, target);
  mkdirSync(dir, { recursive: true });
  const base = `${kind}-${createHash('sha256').update(input).digest('hex').slice(0, 12)}`;
  writeFileSync(path.join(dir, `${base}.bin`), input);
  writeFileSync(path.join(dir, `${base}.txt`), `${symptom}\n`);
  return path.join(dir, `${base}.bin`);
}

/** Every saved regression, target by target. */
export function listRegressions(): Regression[] {
  if (!existsSync(REGRESSIONS_DIR)) return [];
  const out: Regression[] = [];
  for (const target of readdirSync(REGRESSIONS_DIR).sort()) {
    for (const f of readdirSync(path.join(REGRESSIONS_DIR, target)).filter((n) => n.endsWith('.bin')).sort()) {
      const file = path.join(REGRESSIONS_DIR, target, f);
      const note = file.replace(/\.bin$/, '.txt');
      out.push({ target, file, symptom: existsSync(note) ? readFileSync(note, 'utf8').trim() : '' });
    }
  }
  return out;
}

/** What makes two findings the same bug: the kind and the symptom without the numbers that vary by input. */
export function findingKey(kind: string, symptom: string): string {
  return `${kind} ${symptom.replace(/\d+/g, '#')}`;
}
