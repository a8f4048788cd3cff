/**
 * Which CI the job runs in, from the variables each CI sets in every job. A job runs in one CI; the order only
 * decides for an environment that imitates several (GitHub first, as the client always knew it).
 */
import { bitbucket } from './bitbucket';
import { buildkite } from './buildkite';
import { circleci } from './circleci';
import { github } from './github';
import { gitlab } from './gitlab';
import type { CiProvider, Env } from './types';

export const PROVIDERS: readonly CiProvider[] = [github, gitlab, buildkite, circleci, bitbucket];

export const detectProvider = (env: Env): CiProvider | undefined => PROVIDERS.find((p) => p.detect(env));

export { github, gitlab, buildkite, circleci, bitbucket };
export * from './types';
