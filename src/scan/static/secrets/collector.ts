import type { Finding } from '../../model/types';
import { LIMITS } from '../package/limits';
import { AWS_KEY_ID, AWS_SECRET, PATTERNS, TRIGGER, isPlaceholder, looksLikeAwsSecret, type SecretRuleId } from './patterns';
import { RULE_TEXT } from './rule-text';

export type ScanOptions = {
  /**
   * The text is a place where Google API keys are client configuration, made to ship (see rule-text.ts):
   * resources.arsc strings (google-services' google_api_key, Maps keys) and GoogleService-Info.plist.
   */
  clientConfig?: boolean;
  /** Look for AWS secret keys anywhere in the text, not only in texts that hold a prefix (text files read in chunks). */
  awsSecretsAnywhere?: boolean;
};

/**
 * Gathers what the rules find across the files of one package: one hit per rule and file (the first value), and,
 * per file, whether an AWS key id and a secret key were both seen (in any order, across strings or chunks).
 * Values are never kept: a hit holds the file and at most 4 characters of the value.
 */
export class SecretCollector {
  /** Per rule, the files it fired in and what may be shown of the first value of each, in the order found. */
  private readonly hits = new Map<SecretRuleId, Map<string, string>>();
  private readonly aws = new Map<string, { id: string | null; secret: boolean }>();

  /** Searches one text (a DEX string, a chunk of a file, a resource string) of `file`. */
  scan(file: string, text: string, options: ScanOptions = {}): void {
    if (text.length < 20) return;
    if (!TRIGGER.test(text)) {
      // Without a prefix only an AWS secret key can be here; a DEX string that is exactly one is checked cheaply.
      if (options.awsSecretsAnywhere) this.findAwsSecrets(file, text);
      else if (text.length === 40 && looksLikeAwsSecret(text) && /^[0-9A-Za-z/+]+$/.test(text)) this.awsSecret(file);
      return;
    }
    for (const pattern of PATTERNS) {
      if (options.clientConfig && pattern.id === 'package.secret-google-api-key') continue;
      for (const m of pattern.find(text)) {
        if (!isPlaceholder(pattern.randomPart(m))) {
          this.add(pattern.id, file, pattern.shown(m));
          break;
        }
      }
    }
    AWS_KEY_ID.lastIndex = 0;
    for (let m = AWS_KEY_ID.exec(text); m; m = AWS_KEY_ID.exec(text)) {
      if (isPlaceholder(m[0].slice(4))) continue;
      const state = this.awsState(file);
      state.id ??= m[0].slice(0, 4);
      this.pairUp(file);
      break;
    }
    this.findAwsSecrets(file, text);
  }

  /** One finding per rule that fired, listing its files (capped), in a fixed rule order. */
  findings(): Finding[] {
    const out: Finding[] = [];
    for (const [id, text] of Object.entries(RULE_TEXT) as Array<[SecretRuleId, (typeof RULE_TEXT)[SecretRuleId]]>) {
      const hits = this.hits.get(id);
      if (!hits?.size) continue;
      const named = [...hits].slice(0, LIMITS.secretFilesNamed).map(([file, shown]) => `${file} (${shown})`).join(', ');
      const more = hits.size > LIMITS.secretFilesNamed ? `, and ${hits.size - LIMITS.secretFilesNamed} more files` : '';
      out.push({ id, severity: 'high', title: text.title, detail: `${text.what} in ${named}${more}.`, fix: text.fix });
    }
    return out;
  }

  private findAwsSecrets(file: string, text: string): void {
    if (this.aws.get(file)?.secret) return;
    AWS_SECRET.lastIndex = 0;
    for (let m = AWS_SECRET.exec(text); m; m = AWS_SECRET.exec(text)) {
      if (looksLikeAwsSecret(m[0])) {
        this.awsSecret(file);
        return;
      }
    }
  }

  private awsSecret(file: string): void {
    this.awsState(file).secret = true;
    this.pairUp(file);
  }

  private awsState(file: string): { id: string | null; secret: boolean } {
    let state = this.aws.get(file);
    if (!state) {
      state = { id: null, secret: false };
      this.aws.set(file, state);
    }
    return state;
  }

  /** An access key id without its secret opens nothing, and a 40-character string alone may be anything. */
  private pairUp(file: string): void {
    const state = this.aws.get(file);
    // Only the id's prefix (AKIA, ASIA) is shown: nothing of the secret key, nothing random of the id.
    if (state?.id && state.secret) this.add('package.secret-aws', file, `${state.id}…`);
  }

  private add(id: SecretRuleId, file: string, shown: string): void {
    let hits = this.hits.get(id);
    if (!hits) {
      hits = new Map();
      this.hits.set(id, hits);
    }
    if (!hits.has(file)) hits.set(file, shown);
  }
}
