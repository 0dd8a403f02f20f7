/**
 * A connection URL as messages and logs show it (docs/operations.md#production-on-eventstoredb-and-mongodb:
 * start-up errors name the variable and its URL): the user and password between `//` and `@` become `***`,
 * so `mongodb://u:secret@host:27017/ocelog` shows as `mongodb://***@host:27017/ocelog`; a URL without
 * credentials comes back unchanged. Pure string work, it never throws, even on a URL that does not parse.
 */
export function redactUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@')
}
