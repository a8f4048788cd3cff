import type { NodeResolvers, Resolvers } from '../src/generated/graphql';
import { checkNodeIds, findNode, nodeType, type NodeDoc } from '../src/services/nodes';

const node: NodeResolvers = {
  // Every stored document carries its id, whose prefix names its type (src/services/nodes.ts).
  __resolveType: (doc) => {
    const type = nodeType((doc as NodeDoc)._id);
    if (!type) throw new Error('a node without a typed id');
    return type;
  },
};

export const nodeResolvers: Resolvers = {
  Query: {
    node: (_p, { id }, ctx) => findNode(ctx, id),
    nodes: (_p, { ids }, ctx) => {
      checkNodeIds(ids);
      return Promise.all(ids.map((id) => findNode(ctx, id)));
    },
  },
  Node: node,
};
