/**
 * Small DOM builders shared by the page's views (no framework): an element with text or children,
 * a table from header cells and rows, and a link to the object view (`#object/<type>/<id>`).
 */
import { objectHash } from './url-state.js'

/** A child: an element, or text. */
export type Child = Node | string

/** `<tag class=className>` holding `children` (strings become text nodes). */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, className: string, ...children: Child[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag)
  if (className !== '') node.className = className
  node.append(...children)
  return node
}

/** A table with a header row and one row per entry of `rows`; numeric columns (index in `numeric`) align right. */
export function table(headers: string[], rows: Child[][], numeric: readonly number[] = []): HTMLTableElement {
  const cell = (tag: 'th' | 'td', content: Child, i: number) => el(tag, numeric.includes(i) ? 'num' : '', content)
  return el(
    'table',
    'data',
    el('thead', '', el('tr', '', ...headers.map((h, i) => cell('th', h, i)))),
    el('tbody', '', ...rows.map((r) => el('tr', '', ...r.map((c, i) => cell('td', c, i))))),
  )
}

/** A link to the object view, showing `text` (default `type id`). */
export function objectLink(type: string, id: string, text = `${type} ${id}`): HTMLAnchorElement {
  const a = el('a', 'object-link', text)
  a.href = objectHash(type, id)
  return a
}
