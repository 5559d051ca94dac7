/**
 * Key templates: literal text with `{header:<name>}` and `{body:<json pointer>}`
 * placeholders, for example `us-east1_{body:/order_id}`. A prefix such as a data-centre
 * name keeps keys minted in different regions apart.
 */

export type KeyTemplatePart =
  | { readonly kind: 'literal'; readonly text: string }
  | { readonly kind: 'header'; readonly name: string }
  | { readonly kind: 'body'; readonly pointer: string };

const PLACEHOLDER = /\{(header|body):([^{}]+)\}/g;

/**
 * Parses a template once; the result is reused for every delivery.
 * @throws Error when a brace is unmatched, a placeholder is unknown or nothing varies
 */
export function parseKeyTemplate(template: string): readonly KeyTemplatePart[] {
  if (template.length === 0) throw new Error('the template is empty');
  const parts: KeyTemplatePart[] = [];
  let last = 0;
  for (const match of template.matchAll(PLACEHOLDER)) {
    const literal = template.slice(last, match.index);
    if (literal.length > 0) parts.push({ kind: 'literal', text: literal });
    const [, kind, arg = ''] = match;
    if (kind === 'header') {
      parts.push({ kind: 'header', name: arg.trim().toLowerCase() });
    } else {
      if (!arg.startsWith('/')) throw new Error(`body pointer "${arg}" must start with "/"`);
      parts.push({ kind: 'body', pointer: arg });
    }
    last = match.index + match[0].length;
  }
  const tail = template.slice(last);
  if (tail.length > 0) parts.push({ kind: 'literal', text: tail });
  for (const part of parts) {
    if (part.kind === 'literal' && /[{}]/.test(part.text)) {
      throw new Error(`unexpected brace in "${part.text}"; placeholders are {header:name} and {body:/pointer}`);
    }
  }
  if (!parts.some((p) => p.kind !== 'literal')) {
    throw new Error('a template needs at least one {header:...} or {body:...} placeholder, or every delivery shares one key');
  }
  return parts;
}

/** Resolves an RFC 6901 JSON pointer. Returns undefined when any step is missing. */
export function resolveJsonPointer(document: unknown, pointer: string): unknown {
  if (pointer === '') return document;
  let node: unknown = document;
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (Array.isArray(node)) {
      if (!/^(0|[1-9][0-9]*)$/.test(token)) return undefined;
      node = node[Number(token)];
    } else if (node !== null && typeof node === 'object' && Object.hasOwn(node, token)) {
      node = (node as Record<string, unknown>)[token];
    } else {
      return undefined;
    }
  }
  return node;
}
