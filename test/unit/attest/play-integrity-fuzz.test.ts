// Protects: the Play Integrity engine answers every input with well-formed reasons and never throws: 1,000 seeded
// random mutations of a genuine token and of its verdict go through the fuzz target (test/fuzz/play-integrity-target.ts),
// which feeds each one as token text, as a decoded verdict and as the verdict inside a token that decrypts and verifies.
import { fuzzPlayIntegrity, playIntegritySeeds } from '../../fuzz/play-integrity-target';
import { mulberry32, type Rng } from '../../support/prng';

jest.setTimeout(120_000);

const RUNS = 1000;
/** Characters that matter to the readers: the base64url alphabet and its look-alikes, JSON punctuation, odd text. */
const PIECES = [
  ...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_',
  '.', '=', '+', '/', '$', ' ', '\n', '\u0000', '\u00e9', '\ud83d\ude00', '\ud800',
  '{', '}', '[', ']', '"', ':', ',', '\\', 'null', 'true', '-1', '1e400', '"__proto__"', '"PLAY_RECOGNIZED"', '"UNEVALUATED"',
];

const int = (rng: Rng, n: number) => Math.floor(rng() * n);

function mutate(rng: Rng, text: string): string {
  let out = text;
  for (let ops = 1 + int(rng, 4); ops > 0; ops--) {
    const at = int(rng, out.length + 1);
    const piece = PIECES[int(rng, PIECES.length)];
    switch (int(rng, 6)) {
      case 0: out = out.slice(0, at) + piece + out.slice(at + 1); break; // replace one character
      case 1: out = out.slice(0, at) + piece + out.slice(at); break; // insert
      case 2: out = out.slice(0, at) + out.slice(at + 1 + int(rng, 16)); break; // delete a run
      case 3: out = out.slice(0, at); break; // truncate
      case 4: { const len = 1 + int(rng, 64); out = out.slice(0, at) + out.slice(at, at + len).repeat(1 + int(rng, 8)) + out.slice(at); break; } // repeat a run
      default: { const parts = out.split('.'); const i = int(rng, parts.length); const j = int(rng, parts.length); [parts[i], parts[j]] = [parts[j], parts[i]]; out = parts.join('.'); } // swap parts
    }
  }
  return out;
}

it(`answers ${RUNS} seeded mutations of a genuine token and verdict without throwing`, async () => {
  const seeds = (await playIntegritySeeds()).map((b) => b.toString('utf8'));
  for (const seed of seeds) await expect(fuzzPlayIntegrity(Buffer.from(seed))).resolves.toBeUndefined();
  const rng = mulberry32(35);
  for (let run = 0; run < RUNS; run++) {
    const input = mutate(rng, seeds[int(rng, seeds.length)]);
    await expect(fuzzPlayIntegrity(Buffer.from(input, 'utf8'))).resolves.toBeUndefined();
  }
});
