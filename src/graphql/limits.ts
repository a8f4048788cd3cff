import { GraphQLError, getNamedType, getNullableType, isListType, type DocumentNode, type GraphQLSchema, type ValidationRule } from 'graphql';
import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesRule } from '@escape.tech/graphql-armor-max-directives';
import { getComplexity, type ComplexityEstimator } from 'graphql-query-complexity';
import { LIMITS } from '../scan/static/package/limits';

/** The most claims a provider's rules look at, which an audit entry's TokenClaims.all lists. */
const MAX_RULE_CLAIMS = 12;

/** Field nesting, fragments flattened (a spread adds no level); introspection's __schema is not counted. */
export const MAX_DEPTH = 8;
/** Aliased fields per operation: aliases are how one request asks for the same costly field many times. */
export const MAX_ALIASES = 15;
/** Directives per operation (`@include`/`@skip`); a flood of them is work for the validator and nothing else. */
export const MAX_DIRECTIVES = 20;
/** Lexer tokens per document: parsing stops there (graphql-js's own bound, passed to Apollo's parseOptions). */
export const MAX_TOKENS = 10_000;
/**
 * Estimated fields resolved per operation (see listCostEstimator). A console page of 50 builds with their latest
 * grade and findings comes to about 3,000; 5,000 leaves room and refuses lists of lists of lists.
 */
export const MAX_COST = 5000;
/** What a list without a size argument is assumed to hold (an app's keys, a scan's findings, a build's scans). */
export const UNSIZED_LIST = 25;

/** The codes /graphql answers limit refusals with (extensions.code), kept through Apollo's validation wrapper. */
export const LIMIT_CODES = ['QUERY_TOO_DEEP', 'TOO_MANY_ALIASES', 'TOO_MANY_DIRECTIVES', 'QUERY_TOO_COSTLY'] as const;
export type LimitCode = (typeof LIMIT_CODES)[number];

export function limitError(code: LimitCode, message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code, http: { status: 400 } } });
}

/**
 * graphql-armor reports `Syntax Error: <limit> exceeded`: the document parsed fine, so the refusal is reported with
 * its own code and without that prefix (and without armor's throw, so graphql's other rules still report too).
 */
function refuseAs(code: LimitCode) {
  return {
    exposeLimits: true,
    propagateOnRejection: false,
    onReject: [(ctx: { reportError(error: GraphQLError): void } | null, error: GraphQLError) => ctx?.reportError(limitError(code, error.message.replace(/^Syntax Error: /, '')))],
  };
}

/** Validation rules of /graphql, after graphql's own: depth, aliases, directives (cost needs the variables). */
export const limitRules: ValidationRule[] = [
  maxDepthRule({ n: MAX_DEPTH, flattenFragments: true, ignoreIntrospection: true, ...refuseAs('QUERY_TOO_DEEP') }),
  maxAliasesRule({ n: MAX_ALIASES, ...refuseAs('TOO_MANY_ALIASES') }),
  maxDirectivesRule({ n: MAX_DIRECTIVES, ...refuseAs('TOO_MANY_DIRECTIVES') }),
];

/**
 * What one dashboard aggregate costs, whatever it returns: each reads up to DASHBOARD_MAX_ROWS rows (200,000 by
 * default; dashboards-service.ts) to answer with a few dozen, so its price follows what it reads. At 500, one request
 * runs at most 9 of them; a console view runs one.
 */
export const AGGREGATE_COST = 500;
/**
 * Lists without a size argument whose size has a known bound well above UNSIZED_LIST: priced at that bound. A scan
 * keeps up to 100 findings of package-chosen text, so 38 builds with their findings cost 3,800, not 950.
 */
const BOUNDED_LISTS: Record<string, number> = {
  'Scan.findings': LIMITS.findings,
  // The claims one provider's rules look at (src/oidc/providers: GitLab's ten are the most).
  'TokenClaims.all': MAX_RULE_CLAIMS,
};
/**
 * The aggregates (schema/dashboards.graphql, and threatStats of schema/threats.graphql), by type and field. threatStats
 * returns a list of daily counts but reads every threat of its range to make it (up to DASHBOARD_MAX_ROWS): priced as
 * a list (126 with its five fields), 15 aliases of it fit under MAX_COST and read 3 million rows.
 */
const AGGREGATES = new Set([
  'App.threatTrend',
  'App.threatBreakdown',
  'App.buildTrend',
  'App.refusedExchanges',
  'App.attestVerdicts',
  'Query.refusedExchanges',
  'Query.latestGradeDistribution',
  'Query.threatStats',
]);

/** Fields of these types return the items of a page their parent field already counted: not multiplied again. */
const isPageType = (name: string) => name.endsWith('Connection') || name.endsWith('Page');

/**
 * Cost of a field: 1, plus what is under it times the number of items it returns. That number is the field's `first`
 * (connections) or `limit` (older lists) argument as the request resolves it: a literal, a variable's value or the
 * schema default; `ids` of `nodes(ids:)` by its length. The lists inside a connection or page (edges, nodes, data)
 * are the items already counted; any other list counts as UNSIZED_LIST items. Introspection counts 1 per field.
 */
export const listCostEstimator: ComplexityEstimator = ({ type, field, args, childComplexity }) => {
  if (type.name.startsWith('__')) return 1 + childComplexity;
  if (AGGREGATES.has(`${type.name}.${field.name}`)) {
    const rows = typeof args.first === 'number' ? Math.max(1, args.first) : UNSIZED_LIST;
    return AGGREGATE_COST + childComplexity * rows;
  }
  const size = typeof args.first === 'number' ? args.first : typeof args.limit === 'number' ? args.limit : Array.isArray(args.ids) ? args.ids.length : null;
  if (size !== null) return 1 + childComplexity * Math.max(1, size);
  // A page asked for with `first: null` or `limit: null` gets the default page.
  if (isPageType(getNamedType(field.type).name)) return 1 + childComplexity * UNSIZED_LIST;
  if (isListType(getNullableType(field.type)) && !isPageType(type.name)) return 1 + childComplexity * (BOUNDED_LISTS[`${type.name}.${field.name}`] ?? UNSIZED_LIST);
  return 1 + childComplexity;
};

/**
 * The estimated cost of the operation to run, its variables counted. Throws graphql-query-complexity's error when
 * the variables do not fit the operation (execution would refuse them anyway) or the document has too many nodes.
 */
export function operationCost(schema: GraphQLSchema, document: DocumentNode, variables: Record<string, unknown> | undefined, operationName: string | undefined): number {
  return getComplexity({ schema, query: document, variables: variables ?? {}, operationName, estimators: [listCostEstimator] });
}

export function costError(cost: number): GraphQLError {
  return limitError('QUERY_TOO_COSTLY', `Query cost ${cost} exceeds the limit of ${MAX_COST}.`);
}
