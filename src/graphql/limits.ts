import { GraphQLError, Kind, type ASTVisitor, type FragmentDefinitionNode, type SelectionSetNode, type ValidationContext } from 'graphql';

export const MAX_DEPTH = 8;
export const MAX_COST = 2000;

/**
 * Refuses documents deeper than MAX_DEPTH or costlier than MAX_COST before anything runs. Cost counts every field,
 * and multiplies what sits under a field by its `limit` argument (default 25), so lists inside lists add up fast.
 */
export function queryLimits(context: ValidationContext): ASTVisitor {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const def of context.getDocument().definitions) {
    if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
  }

  function measure(set: SelectionSetNode, depth: number, seen: Set<string>): { depth: number; cost: number } {
    let maxDepth = depth;
    let cost = 0;
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) {
        if (!sel.selectionSet) {
          cost += 1;
          continue;
        }
        const limitArg = sel.arguments?.find((a) => a.name.value === 'limit');
        const multiplier = limitArg?.value.kind === Kind.INT ? Math.max(1, Number(limitArg.value.value)) : 25;
        const inner = measure(sel.selectionSet, depth + 1, seen);
        maxDepth = Math.max(maxDepth, inner.depth);
        cost += 1 + inner.cost * (isListLike(sel.name.value) ? multiplier : 1);
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        const inner = measure(sel.selectionSet, depth, seen);
        maxDepth = Math.max(maxDepth, inner.depth);
        cost += inner.cost;
      } else {
        const name = sel.name.value;
        const frag = fragments.get(name);
        if (!frag || seen.has(name)) continue; // cycles are refused by graphql's own rules
        const inner = measure(frag.selectionSet, depth, new Set([...seen, name]));
        maxDepth = Math.max(maxDepth, inner.depth);
        cost += inner.cost;
      }
    }
    return { depth: maxDepth, cost };
  }

  return {
    OperationDefinition(node) {
      const { depth, cost } = measure(node.selectionSet, 1, new Set());
      if (depth > MAX_DEPTH) {
        context.reportError(new GraphQLError(`Query depth ${depth} exceeds the limit of ${MAX_DEPTH}.`, { nodes: [node], extensions: { code: 'QUERY_TOO_DEEP' } }));
      }
      if (cost > MAX_COST) {
        context.reportError(new GraphQLError(`Query cost ${cost} exceeds the limit of ${MAX_COST}.`, { nodes: [node], extensions: { code: 'QUERY_TOO_COSTLY' } }));
      }
    },
  };
}

/** Fields that return lists whose size a `limit` argument sets. */
function isListLike(field: string): boolean {
  // Page wrappers (threats, auditEvents) carry the limit; their `data` list is already counted by it.
  return ['apps', 'builds', 'threats', 'auditEvents', 'apiKeys', 'oidcRules', 'threatStats', 'findings', 'scans'].includes(field);
}
