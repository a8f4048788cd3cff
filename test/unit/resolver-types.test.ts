// Protects: resolvers of the staff schema return stored documents (codegen mappers), and the types refuse a resolver
// that forgets a field: the @ts-expect-error lines below fail `tsc --noEmit` (part of `npm test`) the day they
// compile. At run time, every mapped type answers `id` from the document's `_id`.
import type { AppResolvers, QueryResolvers, ResolversTypes } from '../../src/generated/graphql';
import type { AppDoc } from '../../src/data/apps-repo';
import { resolvers } from '../../resolvers';
import type { MappedResolvers } from '../../resolvers/views';

// A field the document does not hold under its name (App.id: the document has _id) needs its resolver.
// @ts-expect-error id is missing
const withoutId: MappedResolvers<AppResolvers, AppDoc> = { apiKeys: () => [] };

// A root resolver returns the whole document (or whole object), not a part of it.
// @ts-expect-error createdAt and org are missing
const partialApp: QueryResolvers['app'] = async () => ({ _id: 'app_x', name: 'x', plan: 'indie' });
// @ts-expect-error scopes is missing
const partialWhoami: QueryResolvers['whoami'] = async () => ({ appId: 'app_x', plan: 'indie', auth: 'api_key', expiresAt: null });

it('maps each stored document to its GraphQL type, ids included', async () => {
  void [withoutId, partialApp, partialWhoami];
  const mapped = ['App', 'Build', 'Scan', 'Threat', 'ApiKey', 'OidcRule', 'AuditEvent'] as const;
  // Each type's resolvers are written in one domain's part of the list the schema merges.
  const parts = resolvers as unknown as Array<Record<string, { id?: (doc: { _id: string }) => unknown } | undefined>>;
  for (const type of mapped) {
    const [id, ...more] = parts.flatMap((part) => part[type]?.id ?? []);
    expect(more).toHaveLength(0);
    expect(await id({ _id: `${type}-id` })).toBe(`${type}-id`);
  }
  const appType: ResolversTypes['App'] = { _id: 'app_1', name: 'n', plan: 'indie', org: 'o', createdAt: new Date() };
  expect(appType._id).toBe('app_1');
});
