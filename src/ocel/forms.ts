/**
 * The names of the three standard forms of an OCEL 2.0 log (OCEL 2.0 standard: JSON, XML and
 * SQLite serialisations) that `ocelog export --format` takes. Apart from their writers
 * (write-forms.ts), so that naming a form loads no writer.
 */
export const OCEL_FORMS = ['json', 'xml', 'sqlite'] as const
export type OcelForm = (typeof OCEL_FORMS)[number]

/** Whether `raw` names one of the forms (`json`, `xml`, `sqlite`; lower case). */
export function isOcelForm(raw: string): raw is OcelForm {
  return (OCEL_FORMS as readonly string[]).includes(raw)
}
