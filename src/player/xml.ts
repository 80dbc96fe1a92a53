/**
 * A small, strict XML reader for manifests: elements, attributes, text, comments, processing
 * instructions and CDATA; no DTDs or entities beyond the five predefined and numeric ones. One
 * code path for the browser, workers (no DOMParser there) and Node tests.
 */

export interface XmlElement {
  /** Qualified name as written, e.g. `AdaptationSet`. */
  name: string;
  /** Attributes by qualified name, e.g. `hq:objectId`. */
  attributes: Record<string, string>;
  children: XmlElement[];
  /** Concatenated text content directly inside this element. */
  text: string;
}

export class XmlError extends Error {
  override name = 'XmlError';
}

/** Bounds what a hostile manifest can make us build. */
const MAX_DEPTH = 32;
const MAX_ELEMENTS = 100_000;

const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

function decodeEntities(s: string, at: number): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-z]+);|&/g, (whole, name: string | undefined) => {
    if (!name) throw new XmlError(`bare '&' near offset ${at}`);
    if (name.startsWith('#x')) return String.fromCodePoint(parseInt(name.slice(2), 16));
    if (name.startsWith('#')) return String.fromCodePoint(parseInt(name.slice(1), 10));
    const value = ENTITIES[name];
    if (value === undefined) throw new XmlError(`unknown entity ${whole} near offset ${at}`);
    return value;
  });
}

// Sticky patterns matched at the cursor, so parsing stays linear in the document size.
const NAME = /[A-Za-z_][\w.:-]*/y;
const ATTRIBUTE = /\s+([A-Za-z_][\w.:-]*)\s*=\s*("([^"<]*)"|'([^'<]*)')/y;
const END_TAG_CLOSE = /\s*>/y;
const START_TAG_CLOSE = /\s*(\/?)>/y;

/** Parses a document and returns its root element. */
export function parseXml(source: string): XmlElement {
  let pos = 0;
  let count = 0;
  const stack: XmlElement[] = [];
  let root: XmlElement | null = null;

  const fail = (what: string): never => {
    throw new XmlError(`${what} at offset ${pos}`);
  };
  const at = (pattern: RegExp): RegExpExecArray | null => {
    pattern.lastIndex = pos;
    return pattern.exec(source);
  };
  const skipUntil = (end: string) => {
    const i = source.indexOf(end, pos);
    if (i < 0) fail(`unterminated '${source.slice(pos, pos + 4)}'`);
    pos = i + end.length;
  };

  while (pos < source.length) {
    const lt = source.indexOf('<', pos);
    const textEnd = lt < 0 ? source.length : lt;
    if (textEnd > pos) {
      const text = source.slice(pos, textEnd);
      if (stack.length) stack[stack.length - 1].text += decodeEntities(text, pos);
      else if (text.trim()) fail('text outside the root element');
      pos = textEnd;
      continue;
    }
    if (source.startsWith('<?', pos)) skipUntil('?>');
    else if (source.startsWith('<!--', pos)) skipUntil('-->');
    else if (source.startsWith('<![CDATA[', pos)) {
      const start = pos + 9;
      skipUntil(']]>');
      if (!stack.length) fail('CDATA outside the root element');
      stack[stack.length - 1].text += source.slice(start, pos - 3);
    } else if (source.startsWith('<!', pos)) fail('DTDs are not supported');
    else if (source.startsWith('</', pos)) {
      pos += 2;
      const name = at(NAME)?.[0] ?? fail('missing end-tag name');
      pos += name.length;
      const close = at(END_TAG_CLOSE) ?? fail('malformed end tag');
      pos += close[0].length;
      const open = stack.pop();
      if (!open || open.name !== name) fail(`end tag </${name}> does not match <${open?.name ?? ''}>`);
    } else {
      pos += 1;
      const name = at(NAME)?.[0] ?? fail('missing element name');
      pos += name.length;
      const element: XmlElement = { name, attributes: {}, children: [], text: '' };
      for (let m = at(ATTRIBUTE); m; m = at(ATTRIBUTE)) {
        if (m[1] in element.attributes) fail(`duplicate attribute ${m[1]}`);
        element.attributes[m[1]] = decodeEntities(m[3] ?? m[4], pos);
        pos += m[0].length;
      }
      const end = at(START_TAG_CLOSE) ?? fail(`malformed start tag <${name}>`);
      pos += end[0].length;
      if (++count > MAX_ELEMENTS) fail('too many elements');
      if (stack.length) stack[stack.length - 1].children.push(element);
      else if (root) fail('more than one root element');
      else root = element;
      if (!end[1]) {
        if (stack.length >= MAX_DEPTH) fail('elements nested too deeply');
        stack.push(element);
      }
    }
  }
  if (stack.length) throw new XmlError(`unclosed <${stack[stack.length - 1].name}> at end of document`);
  if (!root) throw new XmlError('no root element');
  return root;
}
