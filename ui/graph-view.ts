/**
 * A drawn graph (the process map, the performance map) in a scrollable viewport with zoom buttons:
 * it is first scaled to the panel's width, but never so small that its smallest label falls under
 * MIN_LABEL_PX, and never above its natural size (zoom.ts); "Fit" zooms it to fit the
 * viewport whole, "−" / "+" step the zoom, "1:1" shows the natural size (README § The web page).
 */
import { cssPixels, fitScale, initialScale, type Size } from './zoom.js'

function button(text: string, title: string, onClick: () => void): HTMLButtonElement {
  const b = document.createElement('button')
  b.type = 'button'
  b.className = 'quiet zoom-button'
  b.textContent = text
  b.title = title
  b.addEventListener('click', onClick)
  return b
}

/** Puts Graphviz's `svg` markup into `container`, in a viewport with zoom buttons, at its initial scale. */
export function showGraph(container: HTMLElement, svg: string): void {
  const viewport = document.createElement('div')
  viewport.className = 'graph-viewport'
  viewport.innerHTML = svg
  const drawn = viewport.querySelector('svg')
  const bar = document.createElement('div')
  bar.className = 'zoom-bar'
  container.replaceChildren(bar, viewport)
  if (drawn === null) return
  const natural: Size = { width: cssPixels(drawn.getAttribute('width')) ?? 800, height: cssPixels(drawn.getAttribute('height')) ?? 600 }
  drawn.removeAttribute('width')
  drawn.removeAttribute('height')
  const label = document.createElement('span')
  label.className = 'zoom-label muted'
  let scale = 1
  const zoom = (s: number) => {
    scale = Math.min(4, Math.max(0.05, s))
    drawn.style.width = `${(natural.width * scale).toFixed(1)}px`
    drawn.style.height = `${(natural.height * scale).toFixed(1)}px`
    label.textContent = `${String(Math.round(scale * 100))}%`
    container.dataset.scale = scale.toFixed(3)
  }
  // The viewport is at most 75vh tall (style.css .graph-viewport).
  const box = (): Size => ({ width: viewport.clientWidth || container.clientWidth, height: window.innerHeight * 0.75 })
  bar.append(
    button('Fit', 'Zoom to fit the whole graph', () => zoom(fitScale(natural, box()))),
    button('−', 'Zoom out', () => zoom(scale / 1.25)),
    button('+', 'Zoom in', () => zoom(scale * 1.25)),
    button('1:1', 'Natural size', () => zoom(1)),
    label,
  )
  zoom(initialScale(natural, box()))
}
