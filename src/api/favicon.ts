/**
 * The service's icon, answered at `/favicon.ico` (where browsers look by default) and linked by the
 * `/ui/` page (README § The web page): a small process map, three activities joined by arrows, as
 * SVG (image/svg+xml), so nothing is fetched from elsewhere.
 */

/** The icon's SVG source (32 × 32). */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32" width="32" height="32">
<rect width="32" height="32" rx="6" fill="#1f5fbf"/>
<path d="M10 9.5 L22 9.5 M10 10.5 L15 21 M22 10.5 L17 21" stroke="#ffffff" stroke-width="2" fill="none" stroke-linecap="round"/>
<circle cx="8" cy="9" r="4" fill="#ffffff"/>
<circle cx="24" cy="9" r="4" fill="#ffd166"/>
<circle cx="16" cy="23" r="4.5" fill="#ffffff"/>
</svg>
`
