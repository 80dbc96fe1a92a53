/** A Markdown table's lines: header, rule, one line per row (docs/results.md takes them as they are). */
export function markdownTable(headers: readonly string[], rows: readonly (readonly string[])[]): string[] {
  return [`| ${headers.join(' | ')} |`, `|${headers.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)];
}
