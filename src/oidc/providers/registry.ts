/** Every provider's model, by id. */
import type { ProviderId, ProviderModel } from './model';
import { GITHUB } from './github';
import { GITLAB } from './gitlab';
import { BUILDKITE } from './buildkite';
import { CIRCLECI } from './circleci';
import { BITBUCKET } from './bitbucket';

const MODELS: Record<ProviderId, ProviderModel> = { github: GITHUB, gitlab: GITLAB, buildkite: BUILDKITE, circleci: CIRCLECI, bitbucket: BITBUCKET };

export const providerModel = (id: ProviderId | undefined): ProviderModel => MODELS[id ?? 'github'];
