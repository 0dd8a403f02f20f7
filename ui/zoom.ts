/**
 * The zoom of a drawn graph (README § The web page): the first scale fits the panel's width but
 * keeps the smallest label (edge labels, 9 pt in ui/dot.ts) at MIN_LABEL_PX or more; "Fit" shows
 * the whole graph. Sizes are CSS pixels. Pure.
 */

/** The smallest on-screen size, in CSS pixels, of the graph's smallest label (edge labels: 9 pt) at the first drawing. */
export const MIN_LABEL_PX = 10
/** The smallest label of ui/dot.ts, in points (1 pt = 4/3 CSS px). */
const SMALLEST_LABEL_PT = 9
/** Scale below which the smallest label would be under MIN_LABEL_PX. */
export const MIN_SCALE = MIN_LABEL_PX / ((SMALLEST_LABEL_PT * 4) / 3)

/** A width and height in CSS pixels. */
export interface Size {
  width: number
  height: number
}

/** The first scale of a graph of `natural` size in a viewport `box` wide: the width fitted, within [MIN_SCALE, 1]. */
export function initialScale(natural: Size, box: Size): number {
  if (natural.width <= 0) return 1
  return Math.min(1, Math.max(MIN_SCALE, box.width / natural.width))
}

/** The scale at which the whole graph fits `box` (never above 1). */
export function fitScale(natural: Size, box: Size): number {
  if (natural.width <= 0 || natural.height <= 0) return 1
  return Math.min(1, box.width / natural.width, box.height / natural.height)
}

/** A Graphviz length (`123pt`, `80px` or a bare number in points) in CSS pixels, or null. */
export function cssPixels(length: string | null): number | null {
  if (length === null) return null
  const m = /^([\d.]+)(pt|px)?$/.exec(length.trim())
  if (m?.[1] === undefined) return null
  const n = Number(m[1])
  return m[2] === 'px' ? n : (n * 4) / 3
}
