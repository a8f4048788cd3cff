/**
 * Reads a repository file (src/data/*-repo.ts) with the TypeScript compiler and extracts what MongoDB needs to know
 * to pick an index: the indexes its ensureIndexes() declares, and for every query the collection is asked
 * (`this.col.<op>(filter, ...)`) the filter's fields and the sort. Filters built in a variable, in a helper method or
 * with conditional fields are followed; optional fields give two shapes (without them and with all of them).
 */
import { readFileSync } from 'node:fs';
import ts from 'typescript';

export interface DeclaredIndex {
  name: string;
  keys: [string, 1 | -1][];
}

export interface QueryShape {
  method: string;
  op: string;
  /** Fields compared for equality (or $in), in the filter's top level. */
  equality: string[];
  /** Fields compared by range ($lt, $gte, ...): an index may start there. */
  range: string[];
  /** Fields compared by negation ($ne, $nin, $exists, ...) or only inside $or branches: they never choose an index. */
  other: string[];
  sort: [string, 1 | -1][];
}

const QUERY_OPS = new Set([
  'find',
  'findOne',
  'findOneAndUpdate',
  'findOneAndReplace',
  'findOneAndDelete',
  'updateOne',
  'updateMany',
  'replaceOne',
  'deleteOne',
  'deleteMany',
  'countDocuments',
]);
const EQUALITY_OPS = new Set(['$eq', '$in']);
const RANGE_OPS = new Set(['$lt', '$lte', '$gt', '$gte']);

type Kind = 'eq' | 'range' | 'other';

interface Fields {
  required: Map<string, Kind>;
  optional: Map<string, Kind>;
}

const nameOf = (name: ts.PropertyName): string | null =>
  ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name) ? name.text : null;

function kindOfValue(value: ts.Expression): Kind {
  if (!ts.isObjectLiteralExpression(value)) return 'eq';
  const ops = value.properties.flatMap((p) => (ts.isPropertyAssignment(p) || ts.isShorthandPropertyAssignment(p) ? [nameOf(p.name) ?? ''] : []));
  if (!ops.some((op) => op.startsWith('$'))) return 'eq'; // a whole sub-document
  if (ops.every((op) => EQUALITY_OPS.has(op))) return 'eq';
  return ops.every((op) => RANGE_OPS.has(op) || EQUALITY_OPS.has(op)) ? 'range' : 'other';
}

export function extractRepository(file: string): { indexes: DeclaredIndex[]; queries: QueryShape[] } {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const methods = new Map<string, ts.MethodDeclaration>();
  const visitClasses = (node: ts.Node): void => {
    if (ts.isMethodDeclaration(node) && node.name && ts.isIdentifier(node.name)) methods.set(node.name.text, node);
    ts.forEachChild(node, visitClasses);
  };
  visitClasses(source);

  const indexes: DeclaredIndex[] = [];
  const ensure = methods.get('ensureIndexes');
  if (ensure) {
    const visit = (node: ts.Node): void => {
      if (ts.isObjectLiteralExpression(node)) {
        const key = node.properties.find((p) => ts.isPropertyAssignment(p) && nameOf(p.name) === 'key') as ts.PropertyAssignment | undefined;
        const name = node.properties.find((p) => ts.isPropertyAssignment(p) && nameOf(p.name) === 'name') as ts.PropertyAssignment | undefined;
        if (key && ts.isObjectLiteralExpression(key.initializer)) {
          indexes.push({
            name: name && ts.isStringLiteral(name.initializer) ? name.initializer.text : '?',
            keys: key.initializer.properties.map((p) => {
              const pa = p as ts.PropertyAssignment;
              return [nameOf(pa.name)!, pa.initializer.getText(source).trim() === '-1' ? -1 : 1];
            }),
          });
          return;
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(ensure);
  }

  const queries: QueryShape[] = [];
  for (const [methodName, method] of methods) {
    if (methodName === 'ensureIndexes') continue;
    const visit = (node: ts.Node): void => {
      if (
        ts.isCallExpression(node) &&
        ts.isPropertyAccessExpression(node.expression) &&
        QUERY_OPS.has(node.expression.name.text) &&
        node.expression.expression.getText(source) === 'this.col'
      ) {
        const op = node.expression.name.text;
        const filter = node.arguments[0];
        const alternatives = filter ? filterAlternatives(filter, method) : [{ required: new Map(), optional: new Map() } as Fields];
        const sort = sortOf(node, op);
        for (const fields of alternatives) {
          for (const withOptional of fields.optional.size ? [false, true] : [false]) {
            const all = new Map(fields.required);
            if (withOptional) for (const [k, v] of fields.optional) all.set(k, v);
            queries.push({
              method: methodName,
              op,
              equality: [...all].filter(([, v]) => v === 'eq').map(([k]) => k),
              range: [...all].filter(([, v]) => v === 'range').map(([k]) => k),
              other: [...all].filter(([, v]) => v === 'other').map(([k]) => k),
              sort,
            });
          }
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(method);
  }
  return { indexes, queries };

  function sortOf(call: ts.CallExpression, op: string): [string, 1 | -1][] {
    let sortArg: ts.Expression | undefined;
    // find(...).sort({...}) anywhere up the chain
    for (let node: ts.Node = call; node.parent; node = node.parent) {
      const parent = node.parent;
      if (ts.isPropertyAccessExpression(parent) && parent.name.text === 'sort' && ts.isCallExpression(parent.parent)) {
        sortArg = parent.parent.arguments[0];
        break;
      }
      if (!ts.isPropertyAccessExpression(parent) && !ts.isCallExpression(parent)) break;
    }
    // findOneAndUpdate(filter, update, { sort }) and friends
    if (!sortArg && op.startsWith('findOneAnd')) {
      const options = call.arguments[op === 'findOneAndDelete' ? 1 : 2];
      if (options && ts.isObjectLiteralExpression(options)) {
        const p = options.properties.find((q) => ts.isPropertyAssignment(q) && nameOf(q.name) === 'sort') as ts.PropertyAssignment | undefined;
        sortArg = p?.initializer;
      }
    }
    if (!sortArg || !ts.isObjectLiteralExpression(sortArg)) return [];
    return sortArg.properties.map((p) => {
      const pa = p as ts.PropertyAssignment;
      return [nameOf(pa.name)!, pa.initializer.getText(source).trim() === '-1' ? -1 : 1];
    });
  }

  function filterAlternatives(expr: ts.Expression, scope: ts.Node): Fields[] {
    if (ts.isParenthesizedExpression(expr) || ts.isAsExpression(expr)) return filterAlternatives(expr.expression, scope);
    if (ts.isConditionalExpression(expr)) return [...filterAlternatives(expr.whenTrue, scope), ...filterAlternatives(expr.whenFalse, scope)];
    if (ts.isObjectLiteralExpression(expr)) return [objectFields(expr, scope)];
    if (ts.isIdentifier(expr)) return [variableFields(expr.text, scope)];
    if (ts.isCallExpression(expr) && ts.isPropertyAccessExpression(expr.expression) && expr.expression.expression.kind === ts.SyntaxKind.ThisKeyword) {
      const helper = methods.get(expr.expression.name.text);
      const returned = helper && findReturn(helper);
      if (helper && returned) return filterAlternatives(returned, helper);
    }
    throw new Error(`${file}: cannot read the filter \`${expr.getText(source)}\`; write it as an object literal or a variable`);
  }

  function objectFields(obj: ts.ObjectLiteralExpression, scope: ts.Node, optional = false): Fields {
    const fields: Fields = { required: new Map(), optional: new Map() };
    for (const p of obj.properties) {
      if (ts.isSpreadAssignment(p)) {
        for (const inner of filterAlternatives(p.expression, scope)) {
          for (const [k, v] of [...inner.required, ...inner.optional]) fields.optional.set(k, v);
        }
        continue;
      }
      const name = p.name ? nameOf(p.name as ts.PropertyName) : null;
      if (!name) continue;
      if (name === '$or' || name === '$and') {
        // Fields only inside branches narrow what an index returns but do not choose it.
        if (ts.isPropertyAssignment(p) && ts.isArrayLiteralExpression(p.initializer)) {
          for (const el of p.initializer.elements) {
            if (ts.isObjectLiteralExpression(el)) for (const q of el.properties) if (q.name && nameOf(q.name as ts.PropertyName)) (optional ? fields.optional : fields.required).set(nameOf(q.name as ts.PropertyName)!, 'other');
          }
        }
        continue;
      }
      const kind = ts.isPropertyAssignment(p) ? kindOfValue(p.initializer) : 'eq';
      (optional ? fields.optional : fields.required).set(name, kind);
    }
    return fields;
  }

  function variableFields(variable: string, scope: ts.Node): Fields {
    const fields: Fields = { required: new Map(), optional: new Map() };
    const visit = (node: ts.Node): void => {
      if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.name.text === variable && node.initializer) {
        for (const alt of filterAlternatives(node.initializer, scope)) {
          for (const [k, v] of alt.required) fields.required.set(k, v);
          for (const [k, v] of alt.optional) fields.optional.set(k, v);
        }
      }
      if (
        ts.isBinaryExpression(node) &&
        node.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
        ts.isPropertyAccessExpression(node.left) &&
        ts.isIdentifier(node.left.expression) &&
        node.left.expression.text === variable
      ) {
        const name = node.left.name.text;
        if (name === '$or' || name === '$and') {
          if (ts.isArrayLiteralExpression(node.right)) {
            for (const el of node.right.elements) {
              if (ts.isObjectLiteralExpression(el)) for (const q of el.properties) if (q.name && nameOf(q.name as ts.PropertyName)) fields.optional.set(nameOf(q.name as ts.PropertyName)!, 'other');
            }
          }
        } else {
          fields.optional.set(name, kindOfValue(node.right));
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(scope);
    // A field both set at declaration and reassigned stays required.
    for (const k of fields.required.keys()) fields.optional.delete(k);
    return fields;
  }

  function findReturn(method: ts.MethodDeclaration): ts.Expression | undefined {
    let found: ts.Expression | undefined;
    const visit = (node: ts.Node): void => {
      if (ts.isReturnStatement(node) && node.expression && !found) found = node.expression;
      else ts.forEachChild(node, visit);
    };
    if (method.body) visit(method.body);
    return found;
  }
}

/**
 * Whether MongoDB can answer the shape from one of the indexes without a collection scan and without sorting in
 * memory: an equality on _id; or an index whose leading fields are all bound by equality (at least the first), or
 * whose first field is ranged or sorted on, and whose following fields give the sort, in order or all reversed.
 * Of several such indexes, the one that bounds the most of the filter (its equality prefix, then a ranged field right
 * after it) is named, as MongoDB's planner would prefer it.
 */
export function servedBy(shape: QueryShape, indexes: DeclaredIndex[]): string | null {
  if (shape.equality.includes('_id') && shape.sort.length === 0) return '_id_';
  const all: DeclaredIndex[] = [{ name: '_id_', keys: [['_id', 1]] }, ...indexes];
  const bounded = (index: DeclaredIndex) => {
    let i = 0;
    while (i < index.keys.length && shape.equality.includes(index.keys[i][0])) i++;
    return i + (i < index.keys.length && shape.range.includes(index.keys[i][0]) ? 1 : 0);
  };
  const candidates = all.filter((index) => servesWithoutSorting(shape, index));
  if (candidates.length === 0) return null;
  return candidates.reduce((best, index) => (bounded(index) > bounded(best) ? index : best)).name;
}

function servesWithoutSorting(shape: QueryShape, index: DeclaredIndex): boolean {
  let i = 0;
  while (i < index.keys.length && shape.equality.includes(index.keys[i][0])) i++;
  const sort = shape.sort.filter(([field]) => !shape.equality.includes(field) || !index.keys.slice(0, i).some(([k]) => k === field));
  const leadsWithRangeOrSort = i === 0 && index.keys.length > 0 && (shape.range.includes(index.keys[0][0]) || sort[0]?.[0] === index.keys[0][0]);
  if (i === 0 && !leadsWithRangeOrSort) return false;
  if (sort.length === 0) return true;
  const rest = index.keys.slice(i, i + sort.length);
  if (rest.length !== sort.length || rest.some(([k], j) => k !== sort[j][0])) return false;
  const same = rest.every(([, d], j) => d === sort[j][1]);
  const reversed = rest.every(([, d], j) => d === -sort[j][1]);
  return same || reversed;
}
