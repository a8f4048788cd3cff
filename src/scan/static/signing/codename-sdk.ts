/**
 * The API level apksig takes for a preview codename written as minSdkVersion ("Baklava", "P", "VanillaIceCream"):
 * its first letter looked up in apksig's table (ApkUtils.getMinSdkVersionForCodename), letters past the table
 * counted on from its last entry, letters before it taken as API 1. A package with such a minSdkVersion installs
 * only on that preview's devices, so no release platform matches it; the signature verdict uses apksig's level so
 * that it equals `apksigner verify`'s, which checks the JAR signature whenever the level is below 24: stricter,
 * never looser (docs/scan-evidence.md, "Android signatures, verified as apksigner verifies them").
 */
const FIRST_LETTER_TO_API: ReadonlyArray<readonly [string, number]> = [
  ['C', 2], ['D', 3], ['E', 4], ['F', 7], ['G', 8], ['H', 10], ['I', 13], ['J', 15], ['K', 18], ['L', 20], ['M', 22], ['N', 23], ['O', 25],
];

/** apksig's level for a codename, or null when it names none (apksig refuses those: only A-Z codenames are known). */
export function codenameApiLevel(codename: string): number | null {
  const first = codename.charAt(0);
  if (first < 'A' || first > 'Z') return null;
  let older: readonly [string, number] | undefined;
  for (const entry of FIRST_LETTER_TO_API) {
    if (entry[0] === first) return entry[1];
    if (entry[0] < first) older = entry;
  }
  return older ? older[1] + (first.charCodeAt(0) - older[0].charCodeAt(0)) : 1;
}
