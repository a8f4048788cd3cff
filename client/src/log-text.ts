/**
 * Text the service sends back is printed where a CI runner reads commands. Finding titles and fixes quote the package
 * (a domain of its network rules, a component name), so a hostile package writes part of them. GitHub's runner reads
 * a line starting with `::` as a workflow command, splits lines at CR as well as LF, and takes the older `##[command]`
 * anywhere in a line: one stray newline or `##[` and a package could add annotations, mask words or stop the step's
 * commands (hiding the annotations of its own findings). So every line printed is made of printable characters, and
 * `##[` is broken up. Terminal escape sequences go with the other control characters.
 */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

/** One line as printed: control characters (line breaks included) become spaces, `##[` becomes `## [`. */
export function printable(text: string): string {
  return text.replace(CONTROL, ' ').replace(/##\[/g, '## [');
}

/** Several lines of our own (a report), each made printable. */
export const printableLines = (text: string): string => text.split('\n').map(printable).join('\n');

/**
 * One JSON line for stdout (`--json`): JSON.stringify already escapes control characters; `##[` inside a string is
 * written `##\u005b`, which parses to the same value.
 */
export function jsonLine(value: unknown): string {
  return JSON.stringify(value).replace(/##\[/g, '##\\u005b') + '\n';
}
