/**
 * Splits one CSV line (RFC 4180: fields separated by `,`; a field in double quotes may hold
 * commas and `""` for a quote).
 *
 * Lines are read one at a time, so a quoted field cannot span lines: such a line comes back as
 * `undefined` (an unterminated quote) and is reported like any line that does not parse.
 *
 * @param line - one line, without its newline
 * @returns the fields, or `undefined` when a quote is not closed or is followed by other text
 */
export function splitCsvLine(line: string): string[] | undefined {
  if (!line.includes('"')) return line.split(',');
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    if (line[i] === '"') {
      let value = '';
      let j = i + 1;
      for (;;) {
        const quote = line.indexOf('"', j);
        if (quote < 0) return undefined;
        value += line.slice(j, quote);
        if (line[quote + 1] === '"') {
          value += '"';
          j = quote + 2;
          continue;
        }
        i = quote + 1;
        break;
      }
      fields.push(value);
      if (i === line.length) return fields;
      if (line[i] !== ',') return undefined;
      i++;
    } else {
      const comma = line.indexOf(',', i);
      if (comma < 0) {
        fields.push(line.slice(i));
        return fields;
      }
      fields.push(line.slice(i, comma));
      i = comma + 1;
    }
  }
}
