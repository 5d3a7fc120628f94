// The pages' DOM, plain (no framework: the scripts stay small).

export const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

type Props<K extends keyof HTMLElementTagNameMap> = Partial<HTMLElementTagNameMap[K]> & { attrs?: Record<string, string> };

/** A new element: its properties set, its attributes (`attrs`: aria-*, role) too, its children appended. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, { attrs = {}, ...props }: Props<K> = {}, ...children: Array<Node | string>) {
  const el = Object.assign(document.createElement(tag), props);
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, value);
  el.append(...children);
  return el;
}
